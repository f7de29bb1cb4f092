package localcmd

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/autonomyhq/autonomy/substrates/local"
)

// watchEvents has serve poll GitHub for the installation's event triggers (codeHost github),
// with the runner's GH_TOKEN or GITHUB_TOKEN, which no session receives; it says on w what it
// polls, or why it polls nothing.
func watchEvents(r *local.Runner, w io.Writer) {
	ev := r.In.Runner.Events
	if ev == nil {
		return
	}
	if ev.CodeHost != "github" {
		fmt.Fprintf(w, "autonomy: codeHost %s: event triggers fire from the runner's code flow, not from a poll\n", ev.CodeHost)
		return
	}
	token := os.Getenv("GH_TOKEN")
	if token == "" {
		token = os.Getenv("GITHUB_TOKEN")
	}
	es, err := r.NewEventSource(local.EventOptions{Token: token, BaseURL: os.Getenv("GITHUB_API_URL"), Repo: os.Getenv("GITHUB_REPOSITORY")})
	if err != nil {
		fmt.Fprintf(w, "autonomy: event triggers will not fire: %v\n", err)
		return
	}
	r.WatchEvents(es)
	fmt.Fprintf(w, "autonomy: polling %s every %ds for %s events\n", es.Repo(), ev.PollSeconds, strings.Join(local.PolledEvents, ", "))
	for _, line := range es.Unpolled() {
		fmt.Fprintf(w, "autonomy: %s\n", line)
	}
}
