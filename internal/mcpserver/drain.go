package mcpserver

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainTransport is a transport whose connection answers what it has read before it reports the
// end of its input: a client that writes its requests and closes its end (printf … | autonomy gh
// mcp) gets every answer. The SDK cancels the requests still in flight when a read fails, so the
// end of the input is held back until each call read has had its response written, or the
// connection is closed, or ctx is done.
type drainTransport struct{ inner mcp.Transport }

// Connect implements mcp.Transport.
func (t drainTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: c, changed: make(chan struct{}, 1), closed: make(chan struct{})}, nil
}

// drainConn counts the calls read and the responses written.
type drainConn struct {
	mcp.Connection
	mu              sync.Mutex
	asked, answered int
	changed         chan struct{} // a response was written
	closeOnce       sync.Once
	closed          chan struct{}
}

// Read implements mcp.Connection: at the end of the input, it waits for the answers owed.
func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.IsCall() {
		c.mu.Lock()
		c.asked++
		c.mu.Unlock()
	}
	if !errors.Is(err, io.EOF) {
		return msg, err
	}
	for {
		c.mu.Lock()
		owed := c.asked > c.answered
		c.mu.Unlock()
		if !owed {
			return msg, err
		}
		select {
		case <-c.changed:
		case <-c.closed:
			return msg, err
		case <-ctx.Done():
			return msg, err
		}
	}
}

// Write implements mcp.Connection, counting responses.
func (c *drainConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if _, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		c.answered++
		c.mu.Unlock()
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}
	return err
}

// Close implements mcp.Connection; it ends a wait for answers.
func (c *drainConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}
