// Command pulumi-resource-random is the Pulumi random resource plugin, built from Go modules: the
// upstream Terraform random provider (through ./shim) served by the Pulumi Terraform bridge, as
// pulumi-random's cmd/pulumi-resource-random does. schema.json and bridge-metadata.json are not in
// this tree: build.sh generates them with ./gen and maps them here with `go build -overlay`.
package main

import (
	"context"
	_ "embed"

	pf "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"

	"pulumi-lifecycle/tools/pulumi-cli/random/info"
)

// Version is the plugin version, set by build.sh with -ldflags "-X main.Version=...".
var Version = "4.21.2"

//go:embed schema.json
var schema []byte

//go:embed bridge-metadata.json
var metadata []byte

func main() {
	// The upstream provider is a Plugin Framework one: at this bridge version only the pf entry point
	// serves it (tfbridge.Main panics in InitLogging on a pf.ShimProvider).
	pf.Main(context.Background(), "random", info.Provider(Version, metadata), pf.ProviderMetadata{PackageSchema: schema})
}
