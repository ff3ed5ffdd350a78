package auth

import (
	"context"
	"errors"
	"fmt"
)

// ErrForbidden means the credential is valid but may not do this.
var ErrForbidden = errors.New("forbidden")

// SideRole returns the agent role that may act for side.
func SideRole(side Side) Role {
	if side == Respondent {
		return RoleRespondentAgent
	}
	return RoleClaimantAgent
}

// AuthorizeSide decides whether cred may act for side on resource:
//   - a platform orchestrator acts for its tenant's resources on either side
//     (the caller checks that the resource belongs to cred.Tenant);
//   - an agent acts only for the side of its role, and only with an active
//     membership of that side, or, where it has none, with a capability for
//     that side of the resource.
//
// A membership is satisfied by what the server knows of cred, never by what
// a request says: a credential subject by cred's public id, a principal
// subject by cred's partner and immutable agent id (Subject.Admits), so
// another partner's agent minted with the same agent id is not admitted.
// A side or principal named in a request is never proof of authority.
//
// An account token acts for side only with a membership of that side naming
// its account, on a resource its case binding allows (Credential.MayTouch);
// a capability never stands in for the membership.
func (s *Store) AuthorizeSide(ctx context.Context, cred Credential, resource string, side Side, capabilityToken string) error {
	if cred.ForAccount() {
		return s.authorizeAccount(ctx, cred, resource, side)
	}
	if cred.Role == RolePlatformOrchestrator {
		return nil
	}
	if cred.Role != SideRole(side) {
		return fmt.Errorf("%s may not act for the %s side: %w", cred.Role, side, ErrForbidden)
	}
	members, err := s.Memberships(ctx, resource)
	if err != nil {
		return err
	}
	for _, m := range members {
		if m.Side != side {
			continue
		}
		if m.Subject.Admits(cred) {
			return nil
		}
	}
	if capabilityToken == "" {
		return fmt.Errorf("no %s membership of %s and no case capability: %w", side, resource, ErrForbidden)
	}
	capability, err := s.LookupCapability(ctx, capabilityToken)
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("case capability unknown or expired: %w", ErrForbidden)
	}
	if err != nil {
		return err
	}
	if capability.Resource != resource || capability.Side != side {
		return fmt.Errorf("case capability is for another resource or side: %w", ErrForbidden)
	}
	return nil
}

func (s *Store) authorizeAccount(ctx context.Context, cred Credential, resource string, side Side) error {
	if !cred.MayTouch(resource) {
		return fmt.Errorf("the token is bound to case %s, not %s: %w", cred.CaseID, resource, ErrForbidden)
	}
	members, err := s.Memberships(ctx, resource)
	if err != nil {
		return err
	}
	for _, m := range members {
		if m.Side == side && m.Subject.Admits(cred) {
			return nil
		}
	}
	return fmt.Errorf("account %s has no %s membership of %s: %w", cred.AccountID, side, resource, ErrForbidden)
}
