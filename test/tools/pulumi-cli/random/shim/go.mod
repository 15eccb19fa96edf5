// Stand-in for pulumi-random's nested provider/shim module (which is not in any module zip). It must
// carry this module path: only a package under github.com/terraform-providers/terraform-provider-random
// may import that module's internal/provider package. The wrapper module replaces it with ./shim.
module github.com/terraform-providers/terraform-provider-random/shim

go 1.25

require (
	github.com/hashicorp/terraform-plugin-framework v1.14.1
	github.com/terraform-providers/terraform-provider-random v1.3.2-0.20250422105519-bc2ddb552b46
)
