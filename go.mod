module github.com/korral/storelink

go 1.26.0
