// Package shim hands the upstream Terraform random provider (a terraform-plugin-framework provider
// kept in the upstream module's internal/ tree) to the Pulumi bridge.
package shim

import (
	"github.com/hashicorp/terraform-plugin-framework/provider"
	upstream "github.com/terraform-providers/terraform-provider-random/internal/provider"
)

// NewProvider returns a fresh upstream provider.
func NewProvider() provider.Provider { return upstream.New() }
