module github.com/korral/storelink/mcpserver

go 1.26.0
