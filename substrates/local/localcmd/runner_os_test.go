package localcmd

import (
	"errors"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// TestRunnerRefusesWindows: where the local runner cannot run, every runner verb ends with the
// reason and exit 2, since local.New returns SupportedOS's error.
func TestRunnerRefusesWindows(t *testing.T) {
	err := runnerError(local.SupportedOS("windows"))
	var ee *exitcode.Error
	if !errors.As(err, &ee) || ee.Code != exitcode.Usage || !strings.HasPrefix(ee.Msg, "the local runner needs a Unix-like OS (Linux or macOS)") {
		t.Errorf("runnerError = %#v", err)
	}
}
