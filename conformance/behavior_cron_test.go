package conformance

import "testing"

// TestSameSchedule: schedules are compared by when they fire, not as text.
func TestSameSchedule(t *testing.T) {
	for got, same := range map[string]bool{
		"17 6 * * *": true, "17 6 * * 0-6": true, "17  6 *  * *": true, "17 06 * 1-12 *": true,
		"17 6 * * 1-5": false, "18 6 * * *": false, "17 6 1 * *": false, "not a cron": false,
	} {
		if err := sameSchedule(got, cronExpr); (err == nil) != same {
			t.Errorf("sameSchedule(%q, %q) = %v, want same=%v", got, cronExpr, err, same)
		}
	}
}
