// Package setup holds what controllers.Setup hands to every controller it builds: the field
// manager of their server-side applies and the tests' instruments. It sits below the three
// controller packages so that each can take them without importing package controllers, which
// imports them.
package setup
