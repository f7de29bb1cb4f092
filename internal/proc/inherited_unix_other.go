//go:build unix && !linux

package proc

import "errors"

// sealRange is close_range's CLOSE_RANGE_CLOEXEC, which only Linux has: SealInherited lists the
// descriptors instead.
func sealRange() error { return errors.New("no close_range") }
