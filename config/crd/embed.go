// Package crd embeds the generated CustomResourceDefinitions, so that programs which must
// validate Strata objects exactly like the API server (the strata CLI) carry the very schemas
// `make manifests` writes, instead of a hand-kept copy that could drift.
package crd

import "embed"

// Bases holds bases/*.yaml: one CustomResourceDefinition per file.
//
//go:embed bases/*.yaml
var Bases embed.FS
