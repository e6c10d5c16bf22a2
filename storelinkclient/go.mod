module github.com/korral/storelink/storelinkclient

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/jarcoal/httpmock v1.4.2
	github.com/oapi-codegen/runtime v1.9.0
)

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
)
