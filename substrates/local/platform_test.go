package local

import (
	"runtime"
	"strings"
	"testing"
)

func TestSupportedOS(t *testing.T) {
	t.Parallel()
	for _, goos := range []string{"linux", "darwin"} {
		if err := SupportedOS(goos); err != nil {
			t.Errorf("%s: %v", goos, err)
		}
	}
	for _, goos := range []string{"windows", "plan9", "js"} {
		err := SupportedOS(goos)
		if err == nil || !strings.HasPrefix(err.Error(), "the local runner needs a Unix-like OS (Linux or macOS), and this is "+goos+": ") || !strings.Contains(err.Error(), "WSL") {
			t.Errorf("%s: %v", goos, err)
		}
	}
	if err := checkOS(); (err == nil) != (runtime.GOOS == "linux" || runtime.GOOS == "darwin") {
		t.Errorf("checkOS on %s: %v", runtime.GOOS, err)
	}
}
