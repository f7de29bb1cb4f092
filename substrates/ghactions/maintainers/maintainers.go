// Package maintainers resolves who a gh-actions installation engages for the human seam: the
// logins in the repository variable that policy.box.human.maintainers_var names, or, when that
// variable is unset or empty, the repository's admins. The trusted jobs (engaging a human,
// resolving an ask from /agent approve) and autonomy provision (an environment's required
// reviewers) share this one reading.
package maintainers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-github/v62/github"
)

// DefaultVar is the variable read when the policy names none (the reference's default).
const DefaultVar = "PUBLIC_AGENT_MAINTAINERS"

// Source says where a list of maintainers came from.
type Source string

// The sources of a list.
const (
	FromVariable Source = "variable"
	FromAdmins   Source = "admins"
)

// List is who the installation engages, in the order the variable gives them (admins sorted by
// login), without duplicates.
type List struct {
	Logins []string
	Source Source
	// Var is the variable read.
	Var string
}

// loginRe is GitHub's login syntax: alphanumerics and single inner hyphens, at most 39.
var loginRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,38}$`) })

// Parse splits a variable's value into logins: separated by commas or white space, an optional
// leading @ dropped, duplicates (case-insensitive) dropped. A word that is not a login is an error
// naming it, so a typo never silently engages nobody.
func Parse(value string) ([]string, error) {
	var out []string
	for _, w := range strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		l := strings.TrimPrefix(w, "@")
		if !loginRe().MatchString(l) {
			return nil, fmt.Errorf("%q is not a GitHub login (write logins separated by commas, e.g. alice, @bob)", w)
		}
		if !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, l) }) {
			out = append(out, l)
		}
	}
	return out, nil
}

// Resolve reads the maintainers of owner/repo: the logins in variable varName (DefaultVar when
// empty), falling back to the repository's admins when it is missing or empty. A malformed
// variable is an error, never a silent fallback.
func Resolve(ctx context.Context, c *github.Client, owner, repo, varName string) (*List, error) {
	if varName == "" {
		varName = DefaultVar
	}
	v, resp, err := c.Actions.GetRepoVariable(ctx, owner, repo, varName)
	switch {
	case err == nil:
		logins, perr := Parse(v.Value)
		if perr != nil {
			return nil, fmt.Errorf("repository variable %s: %w", varName, perr)
		}
		if len(logins) > 0 {
			return &List{Logins: logins, Source: FromVariable, Var: varName}, nil
		}
	case resp != nil && resp.StatusCode == http.StatusNotFound:
	default:
		return nil, fmt.Errorf("read repository variable %s: %w", varName, err)
	}
	admins, err := Admins(ctx, c, owner, repo)
	if err != nil {
		return nil, err
	}
	if len(admins) == 0 {
		return nil, errors.New("no maintainers: repository variable " + varName + " is unset and the repository lists no admins (set it, e.g. gh variable set " + varName + " --body 'alice,bob')")
	}
	return &List{Logins: admins, Source: FromAdmins, Var: varName}, nil
}

// Admins lists the logins with admin permission on owner/repo, sorted.
func Admins(ctx context.Context, c *github.Client, owner, repo string) ([]string, error) {
	var out []string
	opts := &github.ListCollaboratorsOptions{Permission: "admin", ListOptions: github.ListOptions{PerPage: 100}}
	for {
		users, resp, err := c.Repositories.ListCollaborators(ctx, owner, repo, opts)
		if err != nil {
			return nil, fmt.Errorf("list the repository's admins: %w", err)
		}
		for _, u := range users {
			out = append(out, u.GetLogin())
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	return out, nil
}

// Has reports whether login is one of the list, case-insensitively as GitHub compares logins.
func (l *List) Has(login string) bool {
	return slices.ContainsFunc(l.Logins, func(o string) bool { return strings.EqualFold(o, login) })
}
