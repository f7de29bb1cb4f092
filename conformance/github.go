package conformance

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates/ghactions/ghrun"
)

// ProbeActors are the actors of the probe fleet (conformance/probe), whose workflows the GitHub
// runner dispatches.
var ProbeActors = []string{"probe", "overtime", "isolated", "asker"}

// gitHubNotProbed says why the expanded checks that watch a process cannot run on GitHub.
const gitHubNotProbed = "a GitHub job runs on GitHub's machines: its process, workspace and timeout are not observable through the Runner contract (the support matrix verifies them from the compiled workflows)"

// GitHubTargets are the GitHub runner's targets, agent and human, against repo (OWNER/NAME), which
// must hold the probe fleet's workflows on its default branch. Without repo they are listed as
// not run. fresh, when set, is how the get check reads a session back (autonomy passes another
// autonomy process); nil is a new runner with nothing in memory.
func GitHubTargets(repo string, fresh Getter) ([]Target, error) {
	skip := ""
	token := ghrun.TokenFromEnv()
	if repo == "" {
		skip = "not run: pass --repo OWNER/NAME, with a token in GITHUB_TOKEN or GH_TOKEN, to probe the GitHub runner against a repository holding the probe fleet (`go test ./conformance` probes it against a simulated GitHub API)"
	} else if token == "" {
		return nil, fmt.Errorf("--repo %s needs a token in GITHUB_TOKEN or GH_TOKEN (actions: write on the repository)", repo)
	}
	// GITHUB_API_URL is the API root GitHub Actions sets in every job; it names a GitHub
	// Enterprise Server, or a simulated API in tests. Unset: api.github.com.
	opts := ghrun.RunnerOptions{Repo: repo, Token: token, Actors: ProbeActors, BaseURL: os.Getenv("GITHUB_API_URL")}
	return []Target{
		{Name: "github", Substrate: "gh-actions", Skip: skip, New: func(ctx context.Context) (*Subject, error) { return withFresh(GitHubSubject(opts, false))(fresh) }},
		{Name: "github human", Substrate: "gh-actions", Human: true, Skip: skip, New: func(ctx context.Context) (*Subject, error) { return withFresh(GitHubSubject(opts, true))(fresh) }},
	}, nil
}

// withFresh sets a subject's GetFresh to fresh, when given.
func withFresh(s *Subject, err error) func(Getter) (*Subject, error) {
	return func(fresh Getter) (*Subject, error) {
		if s != nil && fresh != nil {
			s.GetFresh = fresh
		}
		return s, err
	}
}

// GitHubSubject is a GitHub runner under test; closing it cancels the runs it launched. Its get
// check reads sessions back through a second runner, which knows nothing of the launches.
func GitHubSubject(opts ghrun.RunnerOptions, human bool) (*Subject, error) {
	r, err := ghrun.NewRunner(opts)
	if err != nil {
		return nil, err
	}
	other, err := ghrun.NewRunner(opts)
	if err != nil {
		return nil, err
	}
	t := &tracking{Runner: r}
	s := &Subject{Runner: t, Actor: "probe", NotProbed: gitHubNotProbed, Close: t.cancelAll, GetFresh: other.Get}
	if human {
		s.Actor, s.Human = "asker", true
	}
	return s, nil
}

// tracking remembers the sessions launched through it, to cancel them when the check is done.
type tracking struct {
	ir.Runner
	mu  sync.Mutex
	ids []string
}

func (t *tracking) Launch(ctx context.Context, agent string, params ir.LaunchParams) (ir.Session, error) {
	s, err := t.Runner.Launch(ctx, agent, params)
	if s.ID != "" {
		t.mu.Lock()
		t.ids = append(t.ids, s.ID)
		t.mu.Unlock()
	}
	return s, err
}

func (t *tracking) cancelAll() {
	t.mu.Lock()
	ids := t.ids
	t.mu.Unlock()
	for _, id := range ids {
		t.Runner.Cancel(context.Background(), id)
	}
}
