// Command gen writes the Pulumi schema and bridge metadata of the random provider, as pulumi-random's
// `pulumi-tfgen-random schema` does, for build.sh to embed into the provider binary.
package main

import (
	"encoding/json"
	"flag"
	"log"
	"os"

	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfgen"
	"github.com/pulumi/pulumi-terraform-bridge/v3/unstable/metadata"
	"github.com/pulumi/pulumi/sdk/v3/go/common/diag"
	"github.com/pulumi/pulumi/sdk/v3/go/common/diag/colors"

	"pulumi-lifecycle/tools/pulumi-cli/random/info"
)

func main() {
	version := flag.String("version", "", "plugin version to stamp into the schema")
	upstream := flag.String("upstream", "", "directory of the terraform-provider-random module (for docs)")
	schemaOut := flag.String("schema", "", "schema.json to write")
	metaOut := flag.String("metadata", "", "bridge-metadata.json to write")
	flag.Parse()
	if *version == "" || *schemaOut == "" || *metaOut == "" {
		log.Fatal("usage: gen -version V [-upstream DIR] -schema FILE -metadata FILE")
	}

	prov := info.Provider(*version, nil)
	prov.UpstreamRepoPath = *upstream
	sink := diag.DefaultSink(os.Stderr, os.Stderr, diag.FormatOptions{Color: colors.Never})
	res, err := tfgen.GenerateSchemaWithOptions(tfgen.GenerateSchemaOptions{ProviderInfo: prov, DiagnosticsSink: sink})
	if err != nil {
		log.Fatal(err)
	}
	spec := res.PackageSpec
	spec.Version = *version
	schema, err := json.MarshalIndent(spec, "", "    ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*schemaOut, schema, 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*metaOut, (*metadata.Data)(prov.MetadataInfo.Data).MarshalIndent(), 0o644); err != nil {
		log.Fatal(err)
	}
}
