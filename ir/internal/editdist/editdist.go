// Package editdist measures how far apart two names are, so that error messages can offer the
// nearest valid name for a typo ("did you mean ...?"). Both the profile validator and the cron
// parser use it.
package editdist

// Distance is the edit distance between a and b, counted in bytes (the names compared are
// ASCII): insertions, deletions, substitutions and swaps of two adjacent bytes (loacl for
// local, the commonest typo) each count one (the optimal string alignment distance). Strings
// longer than 64 bytes are never typos of a catalog name; for them it returns 0 when equal and
// 64 otherwise, skipping the quadratic work.
func Distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 64
	}
	// Three rows: the one before the previous is where a swap comes from.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
