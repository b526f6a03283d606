package httpapi

import (
	"context"
	"net/http"
	"slices"

	"github.com/danielgtaylor/huma/v2"
)

// metaAccess is the operation metadata key holding its access.
const metaAccess = "quiver.access"

// register adds an operation with its access rule. It documents what the
// rule implies (security schemes, the X-Timezone and X-CSRF-Token headers,
// 401/403) and applies the body cap; the handler's errors go through
// publicError, so nothing internal reaches the caller.
func register[I, O any](s *server, op huma.Operation, acc access, h func(context.Context, *I) (*O, error)) {
	if op.MaxBodyBytes == 0 {
		op.MaxBodyBytes = s.maxBody + 1 // huma refuses a body that reaches it
	}
	op.Metadata = map[string]any{metaAccess: acc}
	if unsafeMethod(op.Method) {
		op.Errors = append(op.Errors, http.StatusRequestEntityTooLarge)
	}
	if acc != public {
		op.Security = []map[string][]string{{securityBearer: {}}, {securitySession: {}}}
		op.Errors = append(op.Errors, http.StatusBadRequest, http.StatusUnauthorized)
		op.Parameters = append(op.Parameters, &huma.Param{
			Name: timezoneHeader, In: "header",
			Description: "The caller's IANA timezone (e.g. Europe/Paris); overrides the stored one for this request. An unknown zone is a 400.",
			Schema:      &huma.Schema{Type: huma.TypeString},
		})
		if unsafeMethod(op.Method) {
			op.Errors = append(op.Errors, http.StatusForbidden)
			op.Parameters = append(op.Parameters, &huma.Param{
				Name: csrfHeader, In: "header",
				Description: "Required with a session cookie (GET /api/me returns it); not with a bearer token.",
				Schema:      &huma.Schema{Type: huma.TypeString},
			})
		}
	}
	if acc == adminOnly {
		op.Errors = append(op.Errors, http.StatusForbidden)
		op.Description += " Admins only."
	}
	slices.Sort(op.Errors)
	op.Errors = slices.Compact(op.Errors)
	id := op.OperationID
	huma.Register(s.api, op, func(ctx context.Context, in *I) (*O, error) {
		out, err := h(ctx, in)
		if err != nil {
			return nil, s.publicError(ctx, id, err)
		}
		return out, nil
	})
}
