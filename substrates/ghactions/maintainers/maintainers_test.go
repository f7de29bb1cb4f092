package maintainers

import (
	"context"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/autonomyhq/autonomy/internal/ghfake"
	"github.com/google/go-github/v62/github"
)

func TestParse(t *testing.T) {
	got, err := Parse(" @alice, bob\ncarol  Alice,,")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"alice", "bob", "carol"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse = %q, want %q", got, want)
	}
	for _, bad := range []string{"alice;rm -rf", "-bob", "a--b", strings.Repeat("x", 40), "@"} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "not a GitHub login") {
			t.Errorf("Parse(%q) = %v, want a refusal", bad, err)
		}
	}
}

func fake(t *testing.T, collab map[string]string) (*ghfake.Server, *github.Client) {
	t.Helper()
	s, err := ghfake.New(ghfake.Options{Token: "t", Collaborators: collab})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c := github.NewClient(s.Client()).WithAuthToken("t")
	c.BaseURL, _ = url.Parse(s.URL)
	return s, c
}

func setVar(t *testing.T, c *github.Client, name, value string) {
	t.Helper()
	if _, err := c.Actions.CreateRepoVariable(context.Background(), "o", "r", &github.ActionsVariable{Name: name, Value: value}); err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	_, c := fake(t, map[string]string{"zed": "admin", "amy": "admin", "wes": "write"})

	l, err := Resolve(ctx, c, "o", "r", "")
	if err != nil {
		t.Fatal(err)
	}
	if l.Source != FromAdmins || !reflect.DeepEqual(l.Logins, []string{"amy", "zed"}) || l.Var != DefaultVar {
		t.Fatalf("unset variable: %+v, want the admins amy, zed", l)
	}

	setVar(t, c, "MAINTAINERS", "@wes, amy")
	l, err = Resolve(ctx, c, "o", "r", "MAINTAINERS")
	if err != nil {
		t.Fatal(err)
	}
	if l.Source != FromVariable || !reflect.DeepEqual(l.Logins, []string{"wes", "amy"}) || !l.Has("WES") || l.Has("zed") {
		t.Fatalf("variable: %+v", l)
	}

	setVar(t, c, "BROKEN", "wes; curl evil")
	if _, err := Resolve(ctx, c, "o", "r", "BROKEN"); err == nil || !strings.Contains(err.Error(), "BROKEN") {
		t.Fatalf("a malformed variable = %v, want an error naming it", err)
	}
}

func TestResolveNobody(t *testing.T) {
	_, c := fake(t, map[string]string{"wes": "write"})
	if _, err := Resolve(context.Background(), c, "o", "r", "M"); err == nil || !strings.Contains(err.Error(), "gh variable set M") {
		t.Fatalf("no admins and no variable = %v, want an error with the fix", err)
	}
}

func TestCollaboratorPermission(t *testing.T) {
	_, c := fake(t, map[string]string{"amy": "maintain"})
	p, _, err := c.Repositories.GetPermissionLevel(context.Background(), "o", "r", "amy")
	if err != nil || p.GetPermission() != "write" {
		t.Fatalf("amy: %v %v", p, err)
	}
	p, _, err = c.Repositories.GetPermissionLevel(context.Background(), "o", "r", "nobody")
	if err != nil || p.GetPermission() != "none" {
		t.Fatalf("nobody: %v %v", p, err)
	}
	u, _, err := c.Users.Get(context.Background(), "amy")
	if err != nil || u.GetID() != ghfake.UserID("amy") {
		t.Fatalf("user: %v %v", u, err)
	}
}
