package conformance

import (
	"fmt"

	"github.com/autonomyhq/autonomy/substrates"
)

// Realized checks that out, the compile of feature's probe profile (Features), realizes the
// feature: it reads the generated files the way the substrate's runtime will, independently of
// what the substrate declares, through the substrate's substrates.Realizer. A substrate that has
// none cannot have its features verified, which is an error.
func Realized(s substrates.Substrate, feature string, out substrates.Output) error {
	r, ok := s.(substrates.Realizer)
	if !ok {
		return fmt.Errorf("the battery cannot read %s output: implement substrates.Realizer (Realized) in its package", s.Name())
	}
	return r.Realized(feature, out)
}
