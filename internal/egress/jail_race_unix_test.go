//go:build unix

package egress

import (
	"net"
	"strconv"
	"testing"
)

// TestJailBridgesServeWhileMade: a bridge serves while the jail's later bridges are still being
// made; under -race, reading the jail's ports from a bridge then raced the loop appending them.
func TestJailBridgesServeWhileMade(t *testing.T) {
	var ports []int
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	j, err := NewJail(ports...)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for i := range ports {
		c, err := net.Dial("unix", j.sock(i))
		if err != nil {
			t.Fatalf("bridge %d (port %s): %v", i, strconv.Itoa(ports[i]), err)
		}
		buf := make([]byte, 1)
		_, _ = c.Read(buf) // the relay ends when the upstream closes
		c.Close()
	}
}
