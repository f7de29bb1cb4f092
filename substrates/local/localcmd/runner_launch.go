package localcmd

import (
	"encoding/json"
	"strings"

	"github.com/autonomyhq/autonomy/internal/exitcode"
	"github.com/autonomyhq/autonomy/substrates/local"
)

// launchFlags are the launch verb's params, shared by both substrates.
type launchFlags struct {
	params     []string
	paramsJSON string
	req        *local.LaunchRequest
}

// parse merges --params-json and --param NAME=VALUE (a name given twice is refused).
func (lf *launchFlags) parse() (map[string]string, error) {
	out := map[string]string{}
	if lf.paramsJSON != "" {
		dec := json.NewDecoder(strings.NewReader(lf.paramsJSON))
		var m map[string]string
		if err := dec.Decode(&m); err != nil || dec.More() {
			return nil, exitcode.Usagef(`--params-json: give one JSON object of string values, like {"ISSUE":"42"}`)
		}
		for k, v := range m {
			if k == "" {
				return nil, exitcode.Usagef("--params-json: a param has an empty name")
			}
			out[k] = v
		}
	}
	for _, kv := range lf.params {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, exitcode.Usagef("--param %q: write NAME=VALUE", kv)
		}
		if _, dup := out[k]; dup {
			return nil, exitcode.Usagef("--param %s is given twice", k)
		}
		out[k] = v
	}
	return out, nil
}
