module github.com/korral/storelink/mockstorelink

go 1.26.0
