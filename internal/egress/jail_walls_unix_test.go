//go:build unix

package egress

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// From inside one jail, another jail's bridge socket (a file under the temporary folder, of the
// same user) reached the other jail's bridged port: another session's egress proxy, with its
// allowlist. Inside, the folder of the jails holds this jail's sockets alone.
func TestJailDoesNotReachAnotherJailsSocket(t *testing.T) {
	requireHelpers(t)
	a, b := server(t, "mine"), server(t, "OTHER-SESSION")
	pa, _ := strconv.Atoi(a)
	pb, _ := strconv.Atoi(b)
	ja, err := NewJail(pa)
	if err != nil {
		t.Fatal(err)
	}
	defer ja.Close()
	jb, err := NewJail(pb)
	if err != nil {
		t.Fatal(err)
	}
	defer jb.Close()
	other := jb.sock(0)
	out := runJailed(t, ja, `printf 'GET / HTTP/1.0\r\n\r\n' | timeout 5 socat - UNIX-CONNECT:`+other+` 2>&1 | tail -1; echo; echo "LS:" $(ls -A `+filepath.Dir(ja.dir)+`); curl -s http://127.0.0.1:`+a+`/`)
	if strings.Contains(out, "OTHER-SESSION") {
		t.Errorf("jail A reached jail B's bridged port through its socket %s:\n%s", other, out)
	}
	if !strings.Contains(out, "mine") || !strings.Contains(out, "LS: "+filepath.Base(ja.dir)+"\n") {
		t.Errorf("inside jail A, want its own port reached and jail B's folder out of sight:\n%s", out)
	}
}

// The user's runtime folder (systemd --user, the session bus) and X11's sockets are empty
// inside a jail.
func TestJailMasksUserRuntimeSockets(t *testing.T) {
	requireHelpers(t)
	run := filepath.Join("/run/user", strconv.Itoa(os.Getuid()))
	if _, err := os.Stat(run); err != nil {
		if err := os.MkdirAll(run, 0o700); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(run)
	}
	marker := filepath.Join(run, "autonomy-jail-test-"+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(marker)
	j, err := NewJail()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if out := runJailed(t, j, `ls -A `+run); strings.Contains(out, filepath.Base(marker)) {
		t.Errorf("%s is visible inside the jail:\n%s", marker, out)
	}
}

// One jail relays at most MaxRelays connections at once, inside (socat) and out.
func TestBridgeCapsRelays(t *testing.T) {
	if !strings.Contains(bridgeScript, "max-children="+strconv.Itoa(MaxRelays)+" ") {
		t.Errorf("the bridge's socat does not cap its relays at MaxRelays (%d)", MaxRelays)
	}
}

// A writable Confinement keeps the filesystem writable but for what its Binds make read-only,
// and an Alias makes a read-only folder writable again at a second place in the jails' folder
// (and nowhere else: an alias outside it is skipped).
func TestJailWritableWithReadOnlyBindAndAlias(t *testing.T) {
	requireHelpers(t)
	j, err := NewJail()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	at := filepath.Join(j.parent, "state")
	outside := filepath.Join(dir, "elsewhere")
	c := &Confinement{Writable: true, Binds: []Bind{{Path: state}},
		Aliases: []Alias{{Path: state, At: at}, {Path: state, At: outside}}}
	script := `touch ` + dir + `/free && echo free-ok; touch ` + state + `/db 2>/dev/null && echo ro-written; ` +
		`echo x > ` + at + `/db && echo alias-ok; test -e ` + outside + ` && echo outside-made; true`
	argv := j.WrapIn(c, []string{"/bin/sh", "-c", script})
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := string(out)
	if !strings.Contains(got, "free-ok") || !strings.Contains(got, "alias-ok") || strings.Contains(got, "ro-written") || strings.Contains(got, "outside-made") {
		t.Errorf("inside the jail:\n%s", got)
	}
	if data, err := os.ReadFile(filepath.Join(state, "db")); err != nil || string(data) != "x\n" {
		t.Errorf("what the alias wrote, read outside: %q %v", data, err)
	}
}

// A hidden folder is empty inside the jail, and writable there without touching the real one;
// a hidden file is not there, and what is written in its place does not reach it; a link is
// hidden where it leads; a path that does not exist, or is relative, changes nothing.
func TestJailHidesPaths(t *testing.T) {
	requireHelpers(t)
	j, err := NewJail()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	home := t.TempDir()
	codex, claude := filepath.Join(home, ".codex"), filepath.Join(home, ".claude.json")
	if err := os.Mkdir(codex, 0o700); err != nil {
		t.Fatal(err)
	}
	for path, secret := range map[string]string{filepath.Join(codex, "auth.json"): "sk-LOGIN-1", claude: "sk-LOGIN-2", filepath.Join(home, "kept"): "kept-ok"} {
		if err := os.WriteFile(path, []byte(secret), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(home, "link.json")
	if err := os.Symlink(claude, link); err != nil {
		t.Fatal(err)
	}
	c := &Confinement{Writable: true, Hide: []string{codex, link, filepath.Join(home, "missing"), ".codex"}}
	script := `cat ` + codex + `/auth.json ` + claude + ` ` + home + `/kept 2>&1; echo; ls -A ` + codex + `; echo new > ` + codex + `/config.toml && echo tmpfs-written; ` +
		`echo x > ` + claude + ` 2>/dev/null && echo file-written; true`
	argv := j.WrapIn(c, []string{"/bin/sh", "-c", script})
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := string(out)
	if strings.Contains(got, "sk-LOGIN") || !strings.Contains(got, "kept-ok") || !strings.Contains(got, "tmpfs-written") || !strings.Contains(got, "file-written") {
		t.Errorf("inside the jail:\n%s", got)
	}
	if data, err := os.ReadFile(claude); err != nil || string(data) != "sk-LOGIN-2" {
		t.Errorf("the hidden file outside: %q %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(codex, "config.toml")); !os.IsNotExist(err) {
		t.Errorf("what the jail wrote in a hidden folder reached the real one: %v", err)
	}
}

// A hidden file stays hidden when the operator's tool replaces it by an atomic rename while the
// jail runs (git's credential store, a CLI refreshing its login), which an empty file bound over
// it did not (the kernel detaches a mount whose path is renamed over: attack27); the rest of its
// folder stays as it is: files, folders, links, writable where the jail's filesystem is.
func TestJailHidesAFileReplacedWhileItRuns(t *testing.T) {
	requireHelpers(t)
	j, err := NewJail()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	home, flags := t.TempDir(), t.TempDir()
	creds := filepath.Join(home, ".git-credentials")
	if err := os.MkdirAll(filepath.Join(home, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	// What a tool leaves beside the file as it replaces it, left over (attack31): its lock, a
	// temporary file, a backup; none is bound back.
	for path, body := range map[string]string{creds: "https://x:sk-LOGIN-1@example.com", creds + ".lock": "sk-LOGIN-3", creds + ".tmp.31193.dfb3": "sk-LOGIN-4", creds + "~": "sk-LOGIN-5",
		filepath.Join(home, ".gitconfig"): "gitconfig-ok", filepath.Join(home, ".git-credentials-not"): "sibling-ok", filepath.Join(home, "src", "a"): "src-ok"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("src/a", filepath.Join(home, "link")); err != nil {
		t.Fatal(err)
	}
	c := &Confinement{Writable: true, Hide: []string{creds}}
	got := runWhileReplaced(t, j, c, flags, `cd `+home+` && cat .gitconfig .git-credentials-not src/a link .git-credentials .git-credentials.* .git-credentials~ 2>&1; echo; echo w > src/b && echo src-written`,
		`cat .git-credentials 2>&1; echo end`, creds, "https://x:sk-LOGIN-2@example.com")
	for _, want := range []string{"gitconfig-ok", "sibling-ok", "src-oksrc-ok", "src-written", "end"} {
		if !strings.Contains(got, want) {
			t.Errorf("inside the jail, no %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "sk-LOGIN") {
		t.Errorf("inside the jail, the hidden file:\n%s", got)
	}
	if data, err := os.ReadFile(filepath.Join(home, "src", "b")); err != nil || string(data) != "w\n" {
		t.Errorf("what the jail wrote in a folder bound back, outside: %q %v", data, err)
	}
}

// A hidden file's folder is mounted empty only where that cannot break the command (attack30):
// never the root (its /dev), a temporary directory, or a folder it works in or inside one (a
// workspace whose entries became mount points could not be replaced or removed, and new files
// would vanish); a home above the workspace is.
func TestJailEmptiesOnlyAFolderNothingWorksIn(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "src", "repo")
	for _, c := range []struct {
		folder string
		n      int
		want   bool
	}{
		{home, 10, true},
		{"/", 10, false},
		{"/tmp", 10, false},
		{ws, 10, false},
		{filepath.Join(ws, "config"), 10, false},
		{home, maxSiblings + 1, false},
	} {
		if got := emptiable(c.folder, c.n, []string{ws}); got != c.want {
			t.Errorf("emptiable(%q, %d) = %v, want %v", c.folder, c.n, got, c.want)
		}
	}
	// In bwrap's arguments: a kubeconfig in the workspace is an empty file, the workspace stays.
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	kube := filepath.Join(ws, "kubeconfig")
	if err := os.WriteFile(kube, []byte("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := strings.Join((&Confinement{Writable: true, Hide: []string{kube}, Binds: []Bind{{Path: ws, Write: true}}}).args(), " ")
	if !strings.Contains(args, "--ro-bind /dev/null "+kube) || strings.Contains(args, "--tmpfs "+ws) {
		t.Errorf("a hidden file in the workspace: %s", args)
	}
}

// A login folder that holds what the session needs (its workspace, the agent's own program) is
// hidden whole and that bound back: its other entries stay hidden, even one the operator's tool
// replaces by an atomic rename while the jail runs (attack27: hidden one by one, it showed).
func TestJailKeepsWhatAHiddenFolderHolds(t *testing.T) {
	requireHelpers(t)
	j, err := NewJail()
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	home, flags := t.TempDir(), t.TempDir()
	claude := filepath.Join(home, ".claude")
	local := filepath.Join(claude, "local")
	if err := os.MkdirAll(local, 0o700); err != nil {
		t.Fatal(err)
	}
	// A login folder inside the kept one is hidden again once that is bound back.
	inner := filepath.Join(local, ".ssh")
	if err := os.MkdirAll(inner, 0o700); err != nil {
		t.Fatal(err)
	}
	for path, body := range map[string]string{filepath.Join(claude, ".credentials.json"): "sk-LOGIN-1", filepath.Join(local, "claude"): "the-program", filepath.Join(inner, "id"): "sk-LOGIN-3"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := &Confinement{Writable: true, Hide: []string{claude, inner}, Keep: []string{local, filepath.Join(home, "elsewhere")}}
	// The operator's CLI refreshes its login: a new file renamed over the old one.
	got := runWhileReplaced(t, j, c, flags, `cat `+local+`/claude; echo; cat `+claude+`/.credentials.json `+inner+`/id 2>&1; echo`,
		`cat `+claude+`/.credentials.json 2>&1; echo end`, filepath.Join(claude, ".credentials.json"), "sk-LOGIN-2")
	if !strings.Contains(got, "the-program") || strings.Contains(got, "sk-LOGIN") || !strings.Contains(got, "end") {
		t.Errorf("inside the jail:\n%s", got)
	}
}

// runWhileReplaced runs before, then after, in a shell in j confined by c, and between the two
// replaces path by a new file holding body, renamed over it as a tool refreshing a login does;
// flags is a folder for the two to signal through. It returns what the shell printed.
func runWhileReplaced(t *testing.T, j *Jail, c *Confinement, flags, before, after, path, body string) string {
	t.Helper()
	ready, goOn := filepath.Join(flags, "ready"), filepath.Join(flags, "go")
	script := before + `; touch ` + ready + `; n=0; while [ ! -e ` + goOn + ` ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n+1)); done; ` + after
	argv := j.WrapIn(c, []string{"/bin/sh", "-c", script})
	cmd := exec.Command(argv[0], argv[1:]...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 400; i++ {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	fresh := path + ".new"
	if err := os.WriteFile(fresh, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fresh, path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goOn, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return out.String()
}
