// Command testsummary reads `go test -json` on its standard input and prints what `go test`
// prints without -v (each package's result, build errors) and, at the end, the failed tests one
// line each with the file and line they failed at, their output after that list, the list once
// more and the counts ("N passed, N failed, N skipped").
//
// It exists because make test runs the lab, whose failed scenarios log kilobytes each: with go
// test's own output the failure that matters is buried somewhere above the last lines of a CI
// log. make test pipes its go test runs through it.
//
// It exits 1 when a test or a package failed, 2 when it could not read its input.
package main
