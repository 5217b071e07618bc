//! The schemas of team logins: sessions and invitations.

use super::{answer, closed_input, nullable_reference, nullable_string, string};
use serde_json::{Value, json};

/// Team logins: sessions and invitations.
pub(super) fn session_schemas() -> Value {
    let role = json!({"type": "string", "enum": ["owner", "admin", "readonly"]});
    let account = json!({
        "type": "object",
        "properties": {"id": string(), "name": string(), "role": role},
        "required": ["id", "name", "role"],
    });
    let mut nullable_account = account.clone();
    nullable_account["nullable"] = json!(true);
    json!({
        "LoginInput": closed_input(
            "A team member's email and password",
            json!({"email": string(), "password": string()}),
            &["email", "password"],
        ),
        "Session": answer(json!({
            "user": nullable_reference("TeamMember"),
            "csrf_token": nullable_string(),
            "expires": nullable_string(),
            "account": nullable_account,
        })),
        "LoggedOut": answer(json!({"success": {"type": "boolean"}})),
        "Invitation": answer(json!({
            "id": string(),
            "email": nullable_string(),
            "name": string(),
            "role": role,
            "status": {"type": "string", "enum": ["pending", "accepted", "revoked", "expired"]},
            "expires": string(),
            "account": account,
        })),
        "AcceptInvitationInput": closed_input(
            "The new user's password, and its email (required for an owner set-up) and name",
            json!({"email": string(), "name": string(), "password": string()}),
            &["password"],
        ),
        "InviteInput": closed_input(
            "Who to invite: an email, a role (default readonly) and a name",
            json!({"email": string(), "role": role, "name": string()}),
            &["email"],
        ),
        "NewInvitation": {
            "type": "object",
            "description": "The pending team member, with the invitation's token and link path (shown only here)",
            "properties": {
                "id": string(), "name": string(), "email": string(), "role": role,
                "status": {"type": "string", "enum": ["pending"]},
                "last_login": nullable_string(), "created": string(), "expires": string(),
                "token": string(), "path": string(),
            },
            "required": ["id", "name", "email", "role", "status", "last_login", "created", "expires", "token", "path"],
        },
    })
}
