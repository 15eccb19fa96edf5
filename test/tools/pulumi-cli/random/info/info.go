// Package info is the bridge mapping of the random provider: a trimmed equivalent of pulumi-random's
// provider/resources.go (same tokens, ID and state-upgrade hooks), shared by the provider binary
// (../main.go) and the build-time schema generator (../gen).
package info

import (
	"context"
	"errors"

	pf "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge"
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge/tokens"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/terraform-providers/terraform-provider-random/shim"
)

// Provider returns the mapping at the given plugin version; metadata is the bridge-metadata.json
// that gen wrote (nil while generating it).
func Provider(version string, metadata []byte) tfbridge.ProviderInfo {
	prov := tfbridge.ProviderInfo{
		P:            pf.ShimProvider(shim.NewProvider()),
		Name:         "random",
		Description:  "A Pulumi package to safely use randomness in Pulumi programs.",
		Keywords:     []string{"pulumi", "random"},
		License:      "Apache-2.0",
		Homepage:     "https://pulumi.io",
		Repository:   "https://github.com/pulumi/pulumi-random",
		GitHubOrg:    "terraform-providers",
		Version:      version,
		MetadataInfo: tfbridge.NewProviderMetadata(metadata),
		Resources: map[string]*tfbridge.ResourceInfo{
			"random_string": {PreStateUpgradeHook: randomStringPreStateUpgrade},
			"random_bytes":  {ComputeID: randomBytesID},
		},
		JavaScript:                  &tfbridge.JavaScriptInfo{RespectSchemaVersion: true},
		EnableAccurateBridgePreview: true,
		EnableRawStateDelta:         true,
	}
	prov.MustComputeTokens(tokens.SingleModule("random_", "index",
		func(module, name string) (string, error) {
			return tokens.MakeStandard("random")(module, "Random"+name)
		}))
	prov.MustApplyAutoAliases()
	return prov
}

// Old RandomString states may lack their schema-version marker (pulumi-random#258); treat them as V1.
func randomStringPreStateUpgrade(args tfbridge.PreStateUpgradeHookArgs) (int64, resource.PropertyMap, error) {
	if args.PriorStateSchemaVersion == 0 {
		return 1, args.PriorState, nil
	}
	return args.PriorStateSchemaVersion, args.PriorState, nil
}

// RandomBytes is identified by its (possibly secret) base64 output.
func randomBytesID(_ context.Context, state resource.PropertyMap) (resource.ID, error) {
	b, ok := state["base64"]
	if !ok {
		return "", errors.New("random_bytes state has no base64 property")
	}
	if b.IsSecret() {
		b = b.SecretValue().Element
	}
	if !b.IsString() {
		return "", errors.New("random_bytes base64 property is not a string")
	}
	return resource.ID(b.StringValue()), nil
}
