package local

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // timezones resolve the same on every machine, with or without a zoneinfo

	"gopkg.in/yaml.v3"

	"github.com/autonomyhq/autonomy/internal/agent"
	"github.com/autonomyhq/autonomy/internal/egress"
	"github.com/autonomyhq/autonomy/ir"
	"github.com/autonomyhq/autonomy/substrates"
	"github.com/autonomyhq/autonomy/substrates/local/gitws"
)

// The defaults of policy.box.local (documented in docs/local.md).
const (
	defaultTimezone = "UTC"
	defaultGrace    = 10
	maxGrace        = 3600
	// AgentEnv overrides the box's agent command at run time: a JSON list of words.
	AgentEnv = "AUTONOMY_LOCAL_AGENT"
	// LoginEnv, set to 1 in the runner's environment, lets an agent whose model key the
	// environment lacks run with its CLI's own login: without the model proxy, its budget,
	// transcript and network sandbox. Unset, such a launch is refused.
	LoginEnv = "AUTONOMY_AGENT_LOGIN"
)

var boxKeys = []string{"agent", "model", "network", "timezone", "graceSeconds", "logMaxBytes", "overlap", "secrets", "env", "tools", "events", "maintainers", "installPaused", "targetBranch", "egress"}

// box is policy.box.local: how this substrate fills the box every agent runs in.
type box struct {
	agent agent.Choice
	model string
	// network lets a preset's sandboxed agent reach the network (default true: gh and git
	// push need it).
	network  bool
	timezone string
	grace    int
	logMax   int64
	overlap  bool
	// installPaused installs the fleet paused; targetBranch is the branch the code flow merges
	// into ("" for the one the installation root has checked out). See codeflow.go, throttle.go.
	installPaused bool
	targetBranch  string
	// secrets are the environment variables a workflow playbook may read as $secrets.NAME.
	secrets []string
	// env are the names of the runner's environment variables every session receives besides
	// the allowlist (sessionenv.go).
	env []string
	// modelPolicy is what the model proxy beside a preset's session enforces.
	modelPolicy ModelPolicy
	// toolsMax overrides tools.DefaultMax per tool (toolsmax.go).
	toolsMax map[string]int
	// events is policy.box.local.events (events_box.go); maintainers whom escalations of open
	// asks rotate through.
	events      EventsConfig
	maintainers []string
	// egress is policy.box.local.egress.allow: the hosts a preset's agent reaches through the
	// egress proxy (egressbox.go); egressKey where it was written.
	egress    []egress.Rule
	egressKey *yaml.Node
}

// readBox reads policy.box.local with its defaults filled in.
func readBox(p *ir.Profile) (box, ir.Diagnostics) {
	b := box{timezone: defaultTimezone, grace: defaultGrace, network: true, logMax: DefaultLogMaxBytes, modelPolicy: defaultModelPolicy()}
	b.agent, _ = agent.Parse(nil)
	r := &substrates.BoxReader{File: p.File, Prefix: "policy.box.local."}
	var model string
	if n := substrates.BoxNode(p, Name); n != nil {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				continue // a null value means "not set": the default stands
			}
			switch k.Value {
			case "agent":
				var probs []agent.Problem
				b.agent, probs = agent.Parse(v)
				for _, pr := range probs {
					if pr.Warning {
						r.Diags = append(r.Diags, ir.Diagnostic{File: p.File, Pos: ir.Pos{Line: pr.Node.Line, Col: pr.Node.Column}, Severity: ir.Warning, Message: "policy.box.local." + pr.Message, Hint: pr.Hint})
					} else {
						r.Errorf(pr.Node, pr.Hint, "%s", pr.Message)
					}
				}
			case "network":
				if n, ok := r.Bool(v, "network", "network: false keeps the agent off every host but the model proxy; network: true (the default) lets it reach the hosts of egress.allow"); ok {
					b.network = n
				}
			case "model":
				model = readModel(r, v, &b)
			case "env":
				b.env = readEnvNames(r, v)
			case "tools":
				b.toolsMax = readTools(r, v)
			case "timezone":
				tz, ok := r.Str(v, "timezone", "e.g. timezone: Europe/Paris")
				if !ok {
					continue
				}
				if _, err := time.LoadLocation(tz); err != nil || tz == "Local" {
					r.Errorf(v, "use an IANA zone name such as UTC, Europe/Paris or America/New_York", "timezone %q is not a known time zone", tz)
					continue
				}
				b.timezone = tz
			case "graceSeconds":
				if g, ok := r.Int(v, "graceSeconds", "e.g. graceSeconds: 10", 0, maxGrace); ok {
					b.grace = g
				}
			case "logMaxBytes":
				if n, ok := r.Int(v, "logMaxBytes", "e.g. logMaxBytes: 10485760 (10 MiB, the default): a session's log keeps that much of its latest output", minLogMaxBytes, maxLogMaxBytes); ok {
					b.logMax = int64(n)
				}
			case "secrets":
				for i, name := range r.Argv(v, "secrets", "e.g. secrets: [INBOX_TOKEN]") {
					if !secretName().MatchString(name) {
						r.Errorf(v.Content[i], "an environment variable name, e.g. INBOX_TOKEN", "secrets: %q is not an environment variable name", name)
						continue
					}
					b.secrets = append(b.secrets, name)
				}
			case "events":
				readEvents(r, v, &b.events)
			case "maintainers":
				b.maintainers = readMaintainers(r, v)
			case "egress":
				b.egress, b.egressKey = substrates.ReadEgress(v, r.Errorf), k
			case "overlap":
				b.overlap, _ = r.Bool(v, "overlap", "overlap: true lets a scheduled actor start again while its last scheduled run is still going")
			default:
				if !b.readFlowKey(r, k.Value, v) {
					r.NearMiss(k, boxKeys)
				}
			}
		}
	}
	b.model = model
	checkEgress(r, &b)
	if b.agent.Custom() && model != "" {
		r.Diags = append(r.Diags, ir.Diagnostic{File: p.File, Severity: ir.Warning, Pos: boxPos(p),
			Message: "policy.box.local.model is ignored: policy.box.local.agent names the whole command",
			Hint:    "put the model in the agent command"})
	}
	return b, r.Diags
}

// readFlowKey reads a key of the code flow and the throttles; false when k is none of them.
func (b *box) readFlowKey(r *substrates.BoxReader, k string, v *yaml.Node) bool {
	switch k {
	case "installPaused":
		b.installPaused, _ = r.Bool(v, "installPaused", "installPaused: true installs the fleet paused: nothing starts until autonomy runner resume")
	case "targetBranch":
		name, ok := r.Str(v, "targetBranch", "e.g. targetBranch: main")
		if ok {
			if err := gitws.ValidBranch(name); err != nil {
				r.Errorf(v, "e.g. targetBranch: main", "targetBranch: %v", err)
			} else {
				b.targetBranch = name
			}
		}
	default:
		return false
	}
	return true
}

// secretName is an environment variable's name.
var secretName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

func boxPos(p *ir.Profile) ir.Pos {
	if n := substrates.BoxNode(p, Name); n != nil {
		return ir.Pos{Line: n.Line, Col: n.Column}
	}
	return ir.Pos{}
}

// AgentOverride reads AUTONOMY_LOCAL_AGENT: a JSON list of words ("" when unset).
func AgentOverride(value string) ([]string, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	var argv []string
	if err := json.Unmarshal([]byte(value), &argv); err != nil || len(argv) == 0 {
		return nil, fmt.Errorf(`%s must be a JSON list of words, e.g. ["my-agent","--flag"] (no shell is involved)`, AgentEnv)
	}
	for _, w := range argv {
		if w == "" {
			return nil, fmt.Errorf("%s holds an empty word", AgentEnv)
		}
	}
	return argv, nil
}
