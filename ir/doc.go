// Package ir is the autonomy.ir.v1 standard in Go: the profile types (every value keeps its source
// position), the loader, the validator, and the standard's four catalogs as data.
//
// A profile is loaded with Load, which reports structural problems (YAML syntax, unknown keys, wrong
// types, duplicate keys), and checked with Validate, which reports every semantic rule of the standard.
// Both collect every problem instead of stopping at the first, so a user fixes a profile in one pass.
// The package knows no substrate: it never decides how a capability or a trigger is realized.
package ir
