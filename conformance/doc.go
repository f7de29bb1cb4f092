// Package conformance will hold the battery that proves a substrate: runner contract checks probed
// against the real runner, and the feature support matrix read from each substrate's declaration.
package conformance
