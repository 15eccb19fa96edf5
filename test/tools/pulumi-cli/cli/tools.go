//go:build tools

// Keeps the CLI's package graph in this module's go.mod and go.sum; the build names the package itself.
package tools

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
