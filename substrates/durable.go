package substrates

// The install writes its staged files without syncing them one by one, then makes them all
// durable at once (flushStaged) before the journal that vouches for them, and before the renames
// that expose them: one flush instead of a sync per file, and the same guarantee, since no
// staged file is renamed into place before the flush returned.

// syncStaged makes paths, files staged in stage, durable (flushStaged). A variable so that tests
// can watch the order of syncs and renames.
var syncStaged = flushStaged

// createFile creates one staged file of the Output (createStaged). A variable so that tests can
// watch how many are created at once, and make one fail.
var createFile = createStaged
