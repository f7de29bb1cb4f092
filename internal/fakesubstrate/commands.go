package fakesubstrate

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/substrates"
)

// Commands are the commands only fake has: fake-zone prints a profile's policy.box.fake.zone,
// loading it as compile would (through host).
func (Substrate) Commands(host substrates.Host) []*cobra.Command {
	return []*cobra.Command{{
		Use:   "fake-zone PROFILE",
		Short: "Print the zone of a profile's policy.box.fake (the test-only fake substrate)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, _, _, err := host.LoadForTarget(args[0], Name, "read", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			zone, _ := readBox(p.Profile)
			_, err = fmt.Fprintln(cmd.OutOrStdout(), zone)
			return err
		},
	}}
}
