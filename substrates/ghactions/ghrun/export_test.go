package ghrun

// MaxRetries is maxRetries, for the external tests.
const MaxRetries = maxRetries
