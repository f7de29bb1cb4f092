package kubernetes

import (
	"testing"

	"github.com/autonomyhq/autonomy/internal/k8stest"
)

// TestMain stops the control plane the package's cluster tests share (k8stest.Get).
func TestMain(m *testing.M) { k8stest.Main(m) }
