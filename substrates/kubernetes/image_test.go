package kubernetes

import (
	"os"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/agentcli"
)

// TestImagePinsTheAgentCLIs: the session image's Dockerfile installs the agent CLIs at the
// versions internal/agentcli pins (the versions the smoke tests prove), and runs as the uid the
// PodTemplates require.
func TestImagePinsTheAgentCLIs(t *testing.T) {
	data, err := os.ReadFile("../../scripts/k8s/image/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	for _, p := range agentcli.Pins {
		arg := "ARG " + strings.ToUpper(p.Preset) + "_VERSION=" + p.Version
		if !strings.Contains(df, arg) || !strings.Contains(df, `"`+p.Package+"@${"+strings.ToUpper(p.Preset)+`_VERSION}"`) {
			t.Errorf("the Dockerfile does not install %s (want %q)", p.Spec(), arg)
		}
	}
	if !strings.Contains(df, "USER 65532:65532") {
		t.Errorf("the image does not run as uid 65532, which the PodTemplates require (runAsNonRoot, runAsUser 65532)")
	}
}
