//! `submetrics-server`: the REST service of submetrics.
//!
//! `submetrics-server [--listen ADDR:PORT] [--data-dir DIR]` serves the API;
//! `submetrics-server keys create|list|revoke`, `users invite|list|disable`
//! and `accounts create` manage the database offline. On first start with an empty database it creates
//! an account and prints its owner key once (or takes
//! `SUBMETRICS_OWNER_KEY`); while the first account has no active user,
//! each start prints a link that sets up the owner's login.

// The OpenAPI schemas are large `json!` literals.
#![recursion_limit = "256"]

mod auth;
mod error;
mod extract;
mod openapi;
mod outbound;
mod routes;
mod session;
mod state;
mod store;

use clap::{Parser, Subcommand};
use state::AppState;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "submetrics-server",
    version,
    about = "The submetrics REST service"
)]
struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(
        long,
        env = "SUBMETRICS_LISTEN",
        default_value = "127.0.0.1:8080",
        global = true
    )]
    listen: String,
    /// Directory of the SQLite database.
    #[arg(
        long,
        env = "SUBMETRICS_DATA_DIR",
        default_value = "data",
        global = true
    )]
    data_dir: PathBuf,
    #[command(flatten)]
    outbound: outbound::Options,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Manage API keys in the database.
    Keys {
        #[command(subcommand)]
        action: KeyAction,
    },
    /// Manage accounts in the database.
    Accounts {
        #[command(subcommand)]
        action: AccountAction,
    },
    /// Manage team logins (dashboard users) in the database.
    Users {
        #[command(subcommand)]
        action: UserAction,
    },
}

#[derive(Subcommand)]
enum UserAction {
    /// Invite a team member: prints the link that accepts the invitation
    /// (shown once, valid 7 days).
    Invite {
        email: String,
        #[arg(long, default_value = "readonly")]
        role: String,
        #[arg(long, default_value = "")]
        name: String,
        /// The account (default: the first).
        #[arg(long)]
        account: Option<i64>,
        /// Base URL of the service in the printed link (default: the
        /// `--listen` address).
        #[arg(long, env = "SUBMETRICS_PUBLIC_URL")]
        url: Option<String>,
    },
    /// List users and pending invitations.
    List {
        #[arg(long)]
        account: Option<i64>,
    },
    /// Disable a user (its sessions end) or revoke a pending invitation.
    Disable {
        id: String,
        #[arg(long)]
        account: Option<i64>,
    },
}

#[derive(Subcommand)]
enum KeyAction {
    /// Create a key and print it (shown once).
    Create {
        #[arg(long, default_value = "readonly")]
        role: String,
        #[arg(long, default_value = "api key")]
        name: String,
        /// The account (default: the first).
        #[arg(long)]
        account: Option<i64>,
    },
    /// List keys (never the keys themselves).
    List,
    /// Revoke a key by id.
    Revoke { id: String },
}

#[derive(Subcommand)]
enum AccountAction {
    /// Create an account and print its owner key.
    Create { name: String },
}

/// The service allocates through mimalloc, as the benchmark harnesses do
/// (see `submetrics_allocator`): bulk imports and report JSON allocate
/// heavily, and glibc's allocator is the slower of the two there.
#[global_allocator]
static ALLOCATOR: submetrics_allocator::Mimalloc = submetrics_allocator::Mimalloc;

fn main() -> std::process::ExitCode {
    submetrics_allocator::keep_freed_memory_longer();
    let args = Args::parse();
    match run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    // Refuse an unusable owner key before the database is even opened.
    if args.command.is_none()
        && let Some(key) = owner_key_from_env()
    {
        state::usable_key(Some(key)).map_err(|_| {
            format!(
                "SUBMETRICS_OWNER_KEY must have at least {} characters",
                state::MIN_GIVEN_KEY
            )
        })?;
    }
    let state = AppState::open(&args.data_dir)?;
    match args.command {
        Some(Command::Keys { action }) => keys(&state, action),
        Some(Command::Users { action }) => users(&state, action, &args.listen),
        Some(Command::Accounts {
            action: AccountAction::Create { name },
        }) => {
            let (id, key) = state.create_account(&name, None)?;
            println!("account {id} created; owner key (shown once): {key}");
            Ok(())
        }
        None => serve(state, &args.listen, args.outbound.config()?),
    }
}

fn keys(state: &AppState, action: KeyAction) -> Result<(), Box<dyn std::error::Error>> {
    match action {
        KeyAction::Create {
            role,
            name,
            account,
        } => {
            let account = match account {
                Some(id) => id,
                None => first_account(state)?,
            };
            let key = state.create_key(account, &role, &name, None)?;
            println!("{key}");
        }
        KeyAction::List => {
            for key in state.store().keys(None)? {
                println!(
                    "{}\taccount {}\t{}\t{}\t{}{}",
                    key.id,
                    key.account_id,
                    key.role,
                    key.name,
                    key.created,
                    if key.revoked { "\trevoked" } else { "" }
                );
            }
        }
        KeyAction::Revoke { id } => {
            if !state.revoke_key(&id, None)? {
                return Err(format!("no key `{id}`").into());
            }
            println!("revoked {id}");
        }
    }
    Ok(())
}

fn users(
    state: &AppState,
    action: UserAction,
    listen: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    match action {
        UserAction::Invite {
            email,
            role,
            name,
            account,
            url,
        } => {
            let account = match account {
                Some(id) => id,
                None => first_account(state)?,
            };
            let (invitation, token) =
                session::create_invitation(state, account, Some(&email), &name, &role)?;
            let base = url.unwrap_or_else(|| format!("http://{listen}"));
            println!(
                "invited {} as {} (until {}): {}{}",
                email,
                invitation.role,
                invitation.expires,
                base.trim_end_matches('/'),
                session::invitation_path(&token)
            );
        }
        UserAction::List { account } => {
            let accounts = match account {
                Some(id) => vec![id],
                None => state.store().accounts()?.iter().map(|a| a.id).collect(),
            };
            for account in accounts {
                for member in routes::team_members(&state.store(), account)? {
                    let text = |field: &str| member[field].as_str().unwrap_or("").to_string();
                    println!(
                        "{}\taccount {account}\t{}\t{}\t{}\tlast login {}",
                        text("id"),
                        text("email"),
                        text("role"),
                        text("status"),
                        member["last_login"].as_str().unwrap_or("never")
                    );
                }
            }
        }
        UserAction::Disable { id, account } => {
            let account = match account {
                Some(id) => id,
                None => first_account(state)?,
            };
            let mut store = state.store();
            if !store.revoke_invitation(account, &id)?
                && !store.set_user_status(account, &id, "disabled")?
            {
                return Err(
                    format!("no user or pending invitation `{id}` in account {account}").into(),
                );
            }
            println!("disabled {id}");
        }
    }
    Ok(())
}

/// Creates the first owner's set-up invitation when the first account has
/// no active user yet (replacing an earlier one, whose token is gone);
/// returns its token.
fn owner_setup(state: &AppState) -> Result<Option<String>, Box<dyn std::error::Error>> {
    let Some(account) = state.store().accounts()?.first().map(|a| a.id) else {
        return Ok(None);
    };
    if state
        .store()
        .users(account)?
        .iter()
        .any(|user| user.status == "active")
    {
        return Ok(None);
    }
    state.store().revoke_setup_invitations(account)?;
    let (_, token) = session::create_invitation(state, account, None, "", "owner")?;
    Ok(Some(token))
}

fn first_account(state: &AppState) -> Result<i64, Box<dyn std::error::Error>> {
    Ok(state
        .store()
        .accounts()?
        .first()
        .map(|a| a.id)
        .ok_or("no account yet: start the server once or run `accounts create NAME`")?)
}

/// `SUBMETRICS_OWNER_KEY` when set and not empty.
fn owner_key_from_env() -> Option<String> {
    std::env::var("SUBMETRICS_OWNER_KEY")
        .ok()
        .filter(|k| !k.is_empty())
}

fn serve(
    state: AppState,
    listen: &str,
    outbound: outbound::Config,
) -> Result<(), Box<dyn std::error::Error>> {
    if state.account_count() == 0 {
        let given = owner_key_from_env();
        let from_env = given.is_some();
        let (_, key) = state.create_account("default", given)?;
        if !from_env {
            println!("created account `default`; owner API key (shown once): {key}");
        }
    }
    let setup = owner_setup(&state)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|error| cannot_listen(listen, &error))?;
        let address = listener.local_addr()?;
        println!("listening on http://{address}");
        println!("dashboard: http://{address}/app/");
        if let Some(token) = setup {
            println!(
                "first login: open http://{address}{} to set the owner's email and password (valid 7 days)",
                session::invitation_path(&token)
            );
        }
        std::io::stdout().flush()?;
        let state = Arc::new(state);
        outbound::Outbound::start(&state, outbound);
        // Turned into a service once: serving the router itself would
        // rebuild every route for each new connection.
        let app = routes::router(state).into_make_service();
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok(())
    })
}

/// Why the service cannot listen on `listen`, naming the address; an
/// address in use (another server there) suggests `--listen`.
fn cannot_listen(listen: &str, error: &std::io::Error) -> String {
    if error.kind() == std::io::ErrorKind::AddrInUse {
        format!(
            "cannot listen on {listen}: the address is in use (is another server running?); \
             pick another with --listen ADDR:PORT or SUBMETRICS_LISTEN"
        )
    } else {
        format!("cannot listen on {listen}: {error}")
    }
}
