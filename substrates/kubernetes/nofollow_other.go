//go:build !unix

package kubernetes

// oNonBlock is 0 where there is no O_NONBLOCK (see ReadInstallation).
const oNonBlock = 0
