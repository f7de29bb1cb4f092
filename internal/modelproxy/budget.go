package modelproxy

import (
	"fmt"
	"strings"
	"sync"
)

// Budget bounds one run. A zero field is unlimited.
type Budget struct {
	// Requests is the most generation requests (responses, messages, chat
	// completions) the run may make.
	Requests int64 `json:"requests,omitempty"`
	// Tokens is the most input plus output tokens the run may use.
	Tokens int64 `json:"tokens,omitempty"`
	// CostUSD is the most the run may cost, priced by Config.Prices.
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// Price is a model's price in US dollars per million tokens.
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cached_input"`
	Output      float64 `json:"output"`
}

// DefaultPrices prices a model the table does not name at the fallback "*",
// set high on purpose: an unpriced model spends a cost budget fast rather
// than for free. Profiles name their models' real prices in policy.box.
var DefaultPrices = map[string]Price{
	"*": {Input: 15, CachedInput: 15, Output: 75},
}

// Usage is what a run (or one request) used, as the API reported it.
type Usage struct {
	Requests          int64   `json:"requests"`
	InputTokens       int64   `json:"input_tokens"`
	CachedInputTokens int64   `json:"cached_input_tokens"`
	OutputTokens      int64   `json:"output_tokens"`
	CostUSD           float64 `json:"cost_usd"`
	// Estimated is true when a response's usage could not be read (a
	// truncated or malformed body) and was estimated from its size.
	Estimated bool `json:"estimated,omitempty"`
}

// Tokens is input plus output tokens.
func (u Usage) Tokens() int64 { return u.InputTokens + u.OutputTokens }

// Add adds o to u.
func (u *Usage) Add(o Usage) { u.add(o) }

func (u *Usage) add(o Usage) {
	u.Requests += o.Requests
	u.InputTokens += o.InputTokens
	u.CachedInputTokens += o.CachedInputTokens
	u.OutputTokens += o.OutputTokens
	u.CostUSD += o.CostUSD
	u.Estimated = u.Estimated || o.Estimated
}

// ledger admits requests against the budget and sums what they used.
type ledger struct {
	budget Budget
	prices map[string]Price

	mu       sync.Mutex
	admitted int64 // requests let through, settled or not
	used     Usage
	pending  struct {
		tokens int64
		cost   float64
	} // the reservations of the requests in flight
	refused string
}

func newLedger(b Budget, prices map[string]Price) *ledger {
	return &ledger{budget: b, prices: prices}
}

// reservation is what an admitted request may cost at worst: its input as sent and the most
// output it allows. It is held against the budget until the request settles, so requests in
// flight cannot overrun it together.
type reservation struct {
	model  string
	input  int64
	output int64
	cost   float64
}

// admit reserves one request's worst case, or returns why the budget refuses it. A request is let
// through when its worst case fits in what is left, or when it is alone (nothing in flight) and
// the budget is not yet spent: a sequential agent may cross the budget by one request, as the
// API reports usage only after it, but requests at once cannot overrun it together.
func (l *ledger) admit(model string, input, maxOutput int64) (*reservation, string) {
	p := l.price(model)
	res := &reservation{model: model, input: input, output: maxOutput, cost: (float64(input)*p.Input + float64(maxOutput)*p.Output) / 1e6}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.budget
	alone := l.pending.tokens == 0 && l.pending.cost == 0
	var why string
	switch {
	case b.Requests > 0 && l.admitted >= b.Requests:
		why = fmt.Sprintf("%d of %d requests used", l.admitted, b.Requests)
	case b.Tokens > 0 && l.used.Tokens() >= b.Tokens:
		why = fmt.Sprintf("%d tokens used, the budget is %d", l.used.Tokens(), b.Tokens)
	case b.Tokens > 0 && !alone && l.used.Tokens()+l.pending.tokens+input+maxOutput > b.Tokens:
		why = fmt.Sprintf("%d tokens used and %d in flight, the budget is %d (this request may use %d)",
			l.used.Tokens(), l.pending.tokens, b.Tokens, input+maxOutput)
	case b.CostUSD > 0 && l.used.CostUSD >= b.CostUSD:
		why = fmt.Sprintf("$%.4f spent, the budget is $%.4f", l.used.CostUSD, b.CostUSD)
	case b.CostUSD > 0 && !alone && l.used.CostUSD+l.pending.cost+res.cost > b.CostUSD:
		why = fmt.Sprintf("$%.4f spent and $%.4f in flight, the budget is $%.4f (this request to %q may cost $%.4f; a model the prices do not name is priced at \"*\")",
			l.used.CostUSD, l.pending.cost, b.CostUSD, model, res.cost)
	}
	if why != "" {
		if l.refused == "" {
			l.refused = "budget exhausted: " + why
		}
		return nil, "budget exhausted: " + why
	}
	l.admitted++
	l.pending.tokens += input + maxOutput
	l.pending.cost += res.cost
	return res, ""
}

// settle releases a request's reservation and adds what it used: the usage the API reported,
// or, when it reported none (the agent hung up, the stream broke, the body was cut), the whole
// reservation, marked estimated.
func (l *ledger) settle(res *reservation, u *Usage, reported bool) {
	if reported {
		p := l.price(res.model)
		u.CostUSD = (float64(u.InputTokens-u.CachedInputTokens)*p.Input + float64(u.CachedInputTokens)*p.CachedInput +
			float64(u.OutputTokens)*p.Output) / 1e6
	} else {
		u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.CostUSD, u.Estimated = res.input, 0, res.output, res.cost, true
	}
	l.mu.Lock()
	l.pending.tokens -= res.input + res.output
	l.pending.cost -= res.cost
	l.used.add(*u)
	l.mu.Unlock()
}

// price finds a model's price: its exact name, else the longest name in the
// table that prefixes it followed by "-" or ".", else "*".
func (l *ledger) price(model string) Price {
	if p, ok := l.prices[model]; ok {
		return p
	}
	best, found := "", false
	for name := range l.prices {
		if name != "*" && len(name) > len(best) && strings.HasPrefix(model, name) &&
			len(model) > len(name) && strings.ContainsRune("-.", rune(model[len(name)])) {
			best, found = name, true
		}
	}
	if found {
		return l.prices[best]
	}
	return l.prices["*"]
}

func (l *ledger) total() Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.used
}

func (l *ledger) refusedReason() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused
}
