package mcpserver

// ServeOn is serveOn, for the tests of package mcpserver_test.
var ServeOn = serveOn
