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
	refused  string
}

func newLedger(b Budget, prices map[string]Price) *ledger {
	return &ledger{budget: b, prices: prices}
}

// admit reserves one request, or returns why the budget refuses it.
func (l *ledger) admit() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.budget
	var why string
	switch {
	case b.Requests > 0 && l.admitted >= b.Requests:
		why = fmt.Sprintf("%d of %d requests used", l.admitted, b.Requests)
	case b.Tokens > 0 && l.used.Tokens() >= b.Tokens:
		why = fmt.Sprintf("%d tokens used, the budget is %d", l.used.Tokens(), b.Tokens)
	case b.CostUSD > 0 && l.used.CostUSD >= b.CostUSD:
		why = fmt.Sprintf("$%.4f spent, the budget is $%.4f", l.used.CostUSD, b.CostUSD)
	}
	if why != "" {
		if l.refused == "" {
			l.refused = "budget exhausted: " + why
		}
		return "budget exhausted: " + why
	}
	l.admitted++
	return ""
}

// settle prices one finished request and adds it to the total.
func (l *ledger) settle(model string, u *Usage) {
	p := l.price(model)
	u.CostUSD = (float64(u.InputTokens-u.CachedInputTokens)*p.Input + float64(u.CachedInputTokens)*p.CachedInput +
		float64(u.OutputTokens)*p.Output) / 1e6
	l.mu.Lock()
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
