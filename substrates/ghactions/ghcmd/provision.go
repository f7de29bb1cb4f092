package ghcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/spf13/cobra"

	"github.com/autonomyhq/autonomy/internal/cliout"
	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/ghactions"
	"github.com/autonomyhq/autonomy/substrates/ghactions/provision"
)

func newProvision(host substrates.Host) *cobra.Command {
	var repo, format string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "provision PROFILE [--repo OWNER/NAME] [--dry-run] [--format json]",
		Short: "Make a GitHub repository match what the gh-actions installation assumes",
		Long: `provision sets up the repository a gh-actions installation runs in, idempotently: the default
branch protected (required status checks agent-review and policy.box.gh-actions.requiredChecks,
default ci; branches up to date before merge; administrators included; no force pushes; left
as it is when no actor proposes or reviews code, since nothing would post agent-review),
auto-merge allowed and branches deleted on merge, the default workflow token permissions
narrowed to read (a write default lets every workflow without a permissions: block, CI running a
proposal's code too, dispatch the fleet as github-actions[bot]; after it such a workflow gets a
read-only GITHUB_TOKEN: give any that writes a permissions: block), GitHub Actions allowed to
create pull requests (the propose job opens them with the job token), a label per task state (policy.box.taskStates), and the variables the workflows read
(AUTONOMY_PAUSED=false; PUBLIC_AGENT_PROXY_HOST and MODEL_PROXY_OIDC_AUDIENCE from
policy.box.gh-actions proxy_host and oidc_audience). It prints each step: create, update, ok
(already so) or left (a stricter setting, or a variable the owner set, kept as it is). Each
GitHub environment an approval step of a compiled workflow playbook is gated by
(autonomy-ACTOR-STEP, listed in the manifest) is created with the maintainers as required
reviewers (policy.box.human.maintainers_var's variable, else the admins; at most 6) and admins
unable to bypass it; an environment that already has required reviewers is left as it is, one
without gets them, keeping its wait timer and branch policy. It never
weakens a setting. --dry-run prints the plan and changes nothing.

--repo defaults to the repository of the git remote origin of the current directory (a GitHub
URL: https://github.com/OWNER/NAME or git@github.com:OWNER/NAME).

The token comes from GH_TOKEN (or GITHUB_TOKEN) and needs administration rights on the
repository (GH_TOKEN=$(gh auth token) of an account that administers it works); GITHUB_API_URL
names another API root (GitHub Enterprise Server). --dry-run without a token plans without
reading the repository: every step it would take, from "not read (no token)", action "plan".

Exit codes: 0 done, 1 the profile has errors, 2 usage, I/O or GitHub error.`,
		Example: `  autonomy provision profiles/sdlc --repo acme/app --dry-run
  autonomy provision profiles/sdlc --repo acme/app
  GH_TOKEN= autonomy provision profiles/sdlc --repo acme/app --dry-run --format json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := exitcode.CheckFormat(format, "text", "json"); err != nil {
				return err
			}
			if repo == "" {
				var err error
				if repo, err = inferRepo(cmd.Context(), os.Getenv("GITHUB_API_URL") != ""); err != nil {
					return exitcode.Usagef("%v", err)
				}
			}
			owner, name, ok := strings.Cut(repo, "/")
			if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
				return exitcode.Usagef("--repo %q: give OWNER/NAME", repo)
			}
			p, sub, _, err := host.LoadForTarget(args[0], ghactions.Name, "provisioned", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			pol, err := provisionPolicy(p.Profile)
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			if pol.Environments, err = approvalEnvironments(sub, p); err != nil {
				return exitcode.Usagef("%v", err)
			}
			token := os.Getenv("GH_TOKEN")
			if token == "" {
				token = os.Getenv("GITHUB_TOKEN")
			}
			if token == "" && dryRun {
				return printProvision(cmd.OutOrStdout(), format, repo, true, provision.Offline(pol), nil)
			}
			if token == "" {
				return exitcode.Usagef("set GH_TOKEN to a token with administration rights on %s (e.g. GH_TOKEN=$(gh auth token)), or plan with --dry-run", repo)
			}
			client := github.NewClient(nil).WithAuthToken(token)
			if api := os.Getenv("GITHUB_API_URL"); api != "" {
				u, err := url.Parse(strings.TrimSuffix(api, "/") + "/")
				if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
					return exitcode.Usagef("GITHUB_API_URL is %q, want an http(s) URL", api)
				}
				client.BaseURL = u
			}
			stopProgress := cliout.Progress(cmd.ErrOrStderr(), "provision: reading "+repo, cliout.ProgressAfter, time.Second)
			steps, perr := provision.Provision(context.Background(), client, owner, name, pol, dryRun)
			stopProgress()
			return printProvision(cmd.OutOrStdout(), format, repo, dryRun, steps, perr)
		},
	}
	cmd.Flags().StringVar(&repo, "repo", "", "the repository, OWNER/NAME (default: the git remote origin's)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan and change nothing")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}

// printProvision prints the steps in format; perr, an error of some step, is exit 2 after them.
func printProvision(out io.Writer, format, repo string, dryRun bool, steps []provision.Step, perr error) error {
	if format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if steps == nil {
			steps = []provision.Step{}
		}
		_ = enc.Encode(struct {
			Repo   string           `json:"repo"`
			DryRun bool             `json:"dryRun"`
			Steps  []provision.Step `json:"steps"`
		}{repo, dryRun, steps})
	} else {
		printSteps(out, repo, dryRun, steps)
	}
	if perr != nil {
		return exitcode.Usagef("%v", perr)
	}
	return nil
}

func printSteps(w interface{ Write([]byte) (int, error) }, repo string, dryRun bool, steps []provision.Step) {
	if dryRun {
		fmt.Fprintf(w, "plan for %s (dry run: nothing changes):\n", repo)
	} else {
		fmt.Fprintf(w, "provisioning %s:\n", repo)
	}
	counts := map[string]int{}
	for _, s := range steps {
		counts[s.Action]++
		line := fmt.Sprintf("  %-7s %s: %s", s.Action, s.What, s.From)
		if s.Action != "ok" && s.Action != "left" {
			line += " → " + s.To
		}
		if s.Note != "" {
			line += " (" + s.Note + ")"
		}
		fmt.Fprintln(w, line)
	}
	verb := "changed"
	if dryRun {
		verb = "to change"
	}
	if n := counts["plan"]; n > 0 {
		fmt.Fprintf(w, "%d planned without reading the repository (no token: GH_TOKEN shows which are already so)\n", n)
		return
	}
	fmt.Fprintf(w, "%d %s, %d already so, %d left as they are\n", counts["create"]+counts["update"], verb, counts["ok"], counts["left"])
}

// provisionPolicy reads what provisioning needs: policy.box.gh-actions through the decoder
// compile uses (ghactions.ReadProvisionBox), the rest of the box from the installed policy file.
func provisionPolicy(p *ir.Profile) (provision.Policy, error) {
	gh, err := ghactions.ReadProvisionBox(p)
	if err != nil {
		return provision.Policy{}, fmt.Errorf("policy.box.%s:\n%v", ghactions.Name, err)
	}
	var doc struct {
		Governing []string `json:"governingDocuments"`
		Box       struct {
			TaskStates map[string]string `json:"taskStates"`
			Human      struct {
				MaintainersVar string `json:"maintainers_var"`
			} `json:"human"`
			Risk struct {
				HumanRequiredPaths []string `json:"human_required_paths"`
			} `json:"risk"`
		} `json:"box"`
	}
	if err := json.Unmarshal(substrates.PolicyFile(p).Data, &doc); err != nil {
		return provision.Policy{}, fmt.Errorf("the policy: %v", err)
	}
	pol := provision.Policy{TaskStates: doc.Box.TaskStates, RequiredChecks: gh.RequiredChecks,
		Variables: [][2]string{{"AUTONOMY_PAUSED", "false"}}, MaintainersVar: doc.Box.Human.MaintainersVar,
		HumanGate: len(doc.Box.Risk.HumanRequiredPaths) > 0 || len(doc.Governing) > 0, NoCodeFlow: true}
	for _, a := range p.Actors {
		if a.Holds("code:propose") || a.Holds("code:review") {
			pol.NoCodeFlow = false
		}
		if a.Holds("code:review") && a.Contract().AsksForPerson() {
			pol.HumanGate = true // its reviewer may ask for a person (humanApprovalRequired)
		}
	}
	if gh.ProxyHost != "" {
		pol.Variables = append(pol.Variables, [2]string{ghactions.ProxyHostVar, gh.ProxyHost})
	}
	if gh.OIDCAudience != "" {
		pol.Variables = append(pol.Variables, [2]string{ghactions.OIDCAudienceVar, gh.OIDCAudience})
	}
	return pol, nil
}
