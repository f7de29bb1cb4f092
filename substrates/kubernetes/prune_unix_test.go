//go:build unix

package kubernetes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/autonomyhq/autonomy/substrates"
)

// writeInstallation compiles fleetProfile into a new directory and returns it.
func writeInstallation(t *testing.T) string {
	t.Helper()
	out, err := compileFleet(t, writeFleet(t, fleetProfile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := substrates.Write(dir, &out, substrates.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReadInstallationRefusesWhatCompileNeverWrites: a link (to a file outside the folder or
// inside it), a FIFO (as the kustomization or as a file it lists), a file listed twice, one file
// over the cap or all of them over the total cap, and a file that is not YAML are each refused
// with an error naming the file and saying to compile again, never hanging, never reading more
// than the caps, and never quoting the file's content.
func TestReadInstallationRefusesWhatCompileNeverWrites(t *testing.T) {
	const secret = "s3cret-line-of-another-file"
	outside := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(outside, []byte("root: "+secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kdir := func(dir string) string { return filepath.Join(dir, Dir) }
	setKustomization := func(t *testing.T, dir string, resources ...string) {
		t.Helper()
		body := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
		for _, r := range resources {
			body += "  - " + r + "\n"
		}
		p := filepath.Join(kdir(dir), "kustomization.yaml")
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	replace := func(t *testing.T, p string, with func(string) error) {
		t.Helper()
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := with(p); err != nil {
			t.Fatal(err)
		}
	}
	big := func(n int) func(string) error {
		return func(p string) error {
			return os.WriteFile(p, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+filepath.Base(p)[:5]+"}\ndata: {a: "+strings.Repeat("x", n)+"}\n"), 0o644)
		}
	}
	for _, c := range []struct {
		name string
		make func(t *testing.T, dir string)
		want string
	}{
		{"a link out of the folder", func(t *testing.T, dir string) {
			replace(t, filepath.Join(kdir(dir), "fleet.yaml"), func(p string) error { return os.Symlink(outside, p) })
		}, "fleet.yaml is a symbolic link"},
		{"a link in the folder", func(t *testing.T, dir string) {
			replace(t, filepath.Join(kdir(dir), "fleet.yaml"), func(p string) error { return os.Symlink("namespace.yaml", p) })
		}, "fleet.yaml is a symbolic link"},
		{"a link as the kustomization", func(t *testing.T, dir string) {
			replace(t, filepath.Join(kdir(dir), "kustomization.yaml"), func(p string) error { return os.Symlink(outside, p) })
		}, "kustomization.yaml is a symbolic link"},
		{"a FIFO as the kustomization", func(t *testing.T, dir string) {
			replace(t, filepath.Join(kdir(dir), "kustomization.yaml"), func(p string) error { return syscall.Mkfifo(p, 0o644) })
		}, "kustomization.yaml is a FIFO"},
		{"a FIFO listed", func(t *testing.T, dir string) {
			replace(t, filepath.Join(kdir(dir), "fleet.yaml"), func(p string) error { return syscall.Mkfifo(p, 0o644) })
		}, "fleet.yaml is a FIFO"},
		{"a file listed twice", func(t *testing.T, dir string) {
			setKustomization(t, dir, "namespace.yaml", "fleet.yaml", "namespace.yaml")
		}, `lists "namespace.yaml" twice`},
		{"a file over the cap", func(t *testing.T, dir string) {
			replace(t, filepath.Join(kdir(dir), "fleet.yaml"), big(maxManifestBytes))
		}, fmt.Sprintf("fleet.yaml is more than %d bytes", maxManifestBytes)},
		{"files over the total cap", func(t *testing.T, dir string) {
			var names []string
			for i := range maxInstallationBytes/maxManifestBytes + 1 {
				name := fmt.Sprintf("big-%d.yaml", i)
				if err := big(maxManifestBytes - 200)(filepath.Join(kdir(dir), name)); err != nil {
					t.Fatal(err)
				}
				names = append(names, name)
			}
			setKustomization(t, dir, names...)
		}, fmt.Sprintf("more than %d bytes in all", maxInstallationBytes)},
		{"a listed file not YAML", func(t *testing.T, dir string) {
			replace(t, filepath.Join(kdir(dir), "fleet.yaml"), func(p string) error {
				return os.WriteFile(p, []byte("a: 1\n"+secret+": [\n"), 0o644)
			})
		}, "fleet.yaml is not the YAML compile writes (at line"},
		{"a listed document no object", func(t *testing.T, dir string) {
			replace(t, filepath.Join(kdir(dir), "fleet.yaml"), func(p string) error {
				return os.WriteFile(p, []byte("password: "+secret+"\n"), 0o644)
			})
		}, "fleet.yaml is not the YAML compile writes"},
		{"a kustomization not YAML", func(t *testing.T, dir string) {
			replace(t, filepath.Join(kdir(dir), "kustomization.yaml"), func(p string) error {
				return os.WriteFile(p, []byte("resources: "+secret+"\n"), 0o644)
			})
		}, "kustomization.yaml is not the YAML compile writes (at line 1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := writeInstallation(t)
			c.make(t, dir)
			objs, err := ReadInstallation(dir)
			if err == nil {
				t.Fatalf("read %d objects; want an error", len(objs))
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, "compile again") {
				t.Errorf("error %q\nwant it to say %q and to compile again", msg, c.want)
			}
			if strings.Contains(msg, secret) {
				t.Errorf("the error quotes the file's content: %q", msg)
			}
		})
	}
}
