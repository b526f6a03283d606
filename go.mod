module github.com/quiverhq/quiver

go 1.26

require github.com/google/jsonschema-go v0.4.3 // indirect
