//! What each endpoint reads and answers: its operation id (the method name
//! the generated clients know it by), the schema of its request body and
//! of its success answer. An endpoint the router serves without an entry
//! here is a gap in the description; a test fails on it.

use super::schemas::{records_body, reference};
use serde_json::Value;

/// The typed description of one endpoint.
pub struct Operation {
    /// Unique over the document; camelCase.
    pub id: &'static str,
    /// The request body's schema, for endpoints that read one.
    pub request: Option<Value>,
    /// Whether the body may also be NDJSON, CSV or an Arrow IPC stream
    /// (the record upserts and imports), besides JSON of `request`'s schema.
    pub columnar_bodies: bool,
    /// The success answer's schema.
    pub response: Value,
    /// The success answer's media type.
    pub media_type: &'static str,
}

fn op(id: &'static str, request: Option<Value>, response: &str) -> Operation {
    Operation {
        id,
        request,
        columnar_bodies: false,
        response: reference(response),
        media_type: "application/json",
    }
}

/// `operation`, whose body may also be NDJSON, CSV or an Arrow IPC stream.
fn columnar(operation: Operation) -> Operation {
    Operation {
        columnar_bodies: true,
        ..operation
    }
}

fn body(name: &str) -> Option<Value> {
    Some(reference(name))
}

/// The operation of `method` on `path` (as routed, without `/v1`).
pub fn operation(method: &str, path: &str) -> Option<Operation> {
    Some(match (method, path) {
        ("get", "/") => op("getIndex", None, "Index"),
        ("get", "/health") => op("getHealth", None, "Health"),
        ("get", "/openapi.json") => op("getOpenApi", None, "OpenApiDocument"),
        ("get", "/docs") => Operation {
            id: "getApiReference",
            request: None,
            columnar_bodies: false,
            response: serde_json::json!({"type": "string"}),
            media_type: "text/html",
        },

        ("get", "/data/plans") => op("listPlans", None, "PlanList"),
        ("get", "/data/plans/") => op("getPlanWithoutIdTrailingSlash", None, "Error"),
        ("post", "/data/plans") => columnar(op(
            "upsertPlans",
            Some(records_body("PlanInput", "plans")),
            "ImportResults",
        )),
        ("put", "/data/plans") => op("updatePlanWithoutId", None, "Error"),
        ("delete", "/data/plans") => op("deletePlanWithoutId", None, "Error"),
        ("put", "/data/plans/") => op("updatePlanWithoutIdTrailingSlash", None, "Error"),
        ("delete", "/data/plans/") => op("deletePlanWithoutIdTrailingSlash", None, "Error"),
        ("get", "/data/plans/{id}") => op("getPlan", None, "Plan"),
        ("put", "/data/plans/{id}") => op("updatePlan", body("PlanPatch"), "PlanUpdated"),
        ("delete", "/data/plans/{id}") => op("deletePlan", None, "PlanDeleted"),

        ("get", "/data/customers") => op("listCustomers", None, "CustomerList"),
        ("post", "/data/customers") => columnar(op(
            "upsertCustomers",
            Some(records_body("CustomerInput", "customers")),
            "CustomerImportResults",
        )),
        ("get", "/data/customers/{id}") => op("getCustomer", None, "CustomerDetail"),
        ("put", "/data/customers/{id}") => {
            op("updateCustomer", body("CustomerPatch"), "CustomerUpdated")
        }
        ("delete", "/data/customers/{id}") => op("deleteCustomer", None, "Success"),

        ("get", "/data/plan-groups") => op("listPlanGroups", None, "PlanGroupList"),
        ("post", "/data/plan-groups") => op("createPlanGroup", body("PlanGroupInput"), "Success"),
        ("get", "/data/plan-groups/{id}") => op("getPlanGroup", None, "PlanGroup"),
        ("put", "/data/plan-groups/{id}") => {
            op("updatePlanGroup", body("PlanGroupInput"), "Success")
        }
        ("delete", "/data/plan-groups/{id}") => op("deletePlanGroup", None, "Success"),

        ("get", "/data/invoices") => op("listInvoices", None, "InvoiceList"),
        ("post", "/data/invoices") => columnar(op(
            "upsertInvoices",
            Some(records_body("InvoiceInput", "invoices")),
            "ImportResults",
        )),
        ("get", "/data/invoices/{id}") => op("getInvoice", None, "Invoice"),
        ("put", "/data/invoices/{id}") => op("replaceInvoice", body("InvoiceInput"), "Success"),
        ("delete", "/data/invoices/{id}") => op("deleteInvoice", None, "Success"),

        ("get", "/data/data-sources") => op("listDataSources", None, "DataSourceList"),
        ("post", "/data/data-sources") => op(
            "upsertDataSources",
            Some(records_body("DataSourceInput", "data_sources")),
            "ImportResults",
        ),
        ("get", "/data/data-sources/{id}") => op("getDataSource", None, "DataSource"),
        ("put", "/data/data-sources/{id}") => {
            op("updateDataSource", body("DataSourcePatch"), "DataSource")
        }
        ("delete", "/data/data-sources/{id}") => op("deleteDataSource", None, "Success"),

        ("get", "/data/fx-rates") => op("listFxRates", None, "FxRateList"),
        ("post", "/data/fx-rates") => op("loadFxRates", body("FxRateInput"), "FxRatesLoaded"),

        ("post", "/data-sources/{source}/{collection}") => columnar(op(
            "importRecords",
            Some(serde_json::json!({"oneOf": [
                {"type": "object", "additionalProperties": true},
                {"type": "array", "items": {"type": "object", "additionalProperties": true}},
            ]})),
            "ImportResults",
        )),

        ("get", "/customers") => op("listAnalyticsCustomers", None, "AnalyticsCustomerList"),
        ("get", "/customers/{id}") => op("getAnalyticsCustomer", None, "AnalyticsCustomerDetail"),
        ("post", "/customers/{id}/resync") => op("resyncCustomer", None, "Message"),
        ("get", "/movements") => op("listMovements", None, "MovementList"),

        ("get", "/account") => op("getAccount", None, "Account"),
        ("put", "/account") => op("updateAccount", body("AccountPatch"), "Account"),
        ("get", "/profile") => op("getProfile", None, "Profile"),
        ("put", "/profile") => op("updateProfile", body("ProfilePatch"), "Profile"),
        ("get", "/account/billing") => op("getBilling", None, "Billing"),
        ("get", "/account/team") => op("listTeamMembers", None, "TeamMemberList"),
        ("post", "/account/team") => op("inviteTeamMember", body("InviteInput"), "NewInvitation"),
        ("delete", "/account/team/{id}") => op("removeTeamMember", None, "Success"),

        ("post", "/session") => op("logIn", body("LoginInput"), "Session"),
        ("get", "/session") => op("getSession", None, "Session"),
        ("delete", "/session") => op("logOut", None, "LoggedOut"),
        ("get", "/invitations/{token}") => op("getInvitation", None, "Invitation"),
        ("post", "/invitations/{token}") => {
            op("acceptInvitation", body("AcceptInvitationInput"), "Session")
        }
        ("get", "/account/api-keys") => op("listApiKeys", None, "ApiKeyList"),
        ("post", "/account/api-keys") => op("createApiKey", body("ApiKeyInput"), "NewApiKey"),
        ("delete", "/account/api-keys/{id}") => op("revokeApiKey", None, "Success"),

        ("get", "/settings/notifications") => {
            op("getNotificationSettings", None, "NotificationSettings")
        }
        ("put", "/settings/notifications") => op(
            "updateNotificationSettings",
            body("NotificationSettingsPatch"),
            "NotificationSettings",
        ),
        ("get", "/settings/payment-platform") => op(
            "getPaymentPlatformSettings",
            None,
            "PaymentPlatformSettings",
        ),
        ("put", "/settings/payment-platform") => op(
            "connectPaymentPlatform",
            body("PaymentPlatformInput"),
            "PaymentPlatformSettings",
        ),
        ("delete", "/settings/payment-platform") => op(
            "disconnectPaymentPlatform",
            None,
            "PaymentPlatformDisconnected",
        ),
        ("get", "/settings/stripe") => op("getStripeSettings", None, "PaymentPlatformSettings"),
        ("put", "/settings/stripe") => op(
            "connectStripe",
            body("PaymentPlatformInput"),
            "PaymentPlatformSettings",
        ),
        ("delete", "/settings/stripe") => {
            op("disconnectStripe", None, "PaymentPlatformDisconnected")
        }
        ("post", "/webhooks/stripe/{account}") => op(
            "receiveStripeWebhook",
            Some(
                serde_json::json!({"type": "object", "description": "A Stripe event", "additionalProperties": true}),
            ),
            "StripeWebhookReceived",
        ),
        ("get", "/settings/crm") => op("getCrmSettings", None, "CrmSettings"),
        ("get", "/settings/hubspot") => op("getHubspotSettings", None, "CrmSettings"),

        ("post", "/settings/notifications/digest") => {
            op("sendDigest", body("DigestInput"), "DigestQueued")
        }

        ("get", "/webhooks") => op("listWebhooks", None, "WebhookList"),
        ("post", "/webhooks") => op("createWebhook", body("WebhookInput"), "NewWebhook"),
        ("get", "/webhooks/events") => op("listEventTypes", None, "EventTypeList"),
        ("get", "/webhooks/events/{name}/sample") => op("getEventSample", None, "EventPayload"),
        ("get", "/webhooks/{id}") => op("getWebhook", None, "Webhook"),
        ("put", "/webhooks/{id}") => op("updateWebhook", body("WebhookPatch"), "Webhook"),
        ("delete", "/webhooks/{id}") => op("deleteWebhook", None, "WebhookDeleted"),
        ("post", "/webhooks/{id}/test") => op("testWebhook", body("WebhookTestInput"), "Delivery"),
        ("get", "/webhooks/{id}/deliveries") => op("listDeliveries", None, "DeliveryList"),
        ("post", "/webhooks/{id}/deliveries/{delivery_id}/redeliver") => {
            op("redeliver", None, "Delivery")
        }

        ("get", "/reports") => op("listReports", None, "ReportCatalogue"),
        ("get", "/reports/{name}") => op("getReport", None, "Report"),
        _ => return None,
    })
}
