//go:build !linux

package main

import (
	"errors"
	"time"
)

var errLinux = errors.New("launchrate counts the detached supervisors' CPU as their subreaper, which needs Linux")

func subreaper() error                    { return errLinux }
func reapAll() error                      { return errLinux }
func childrenCPU() (time.Duration, error) { return 0, errLinux }
