//! `submetrics-server`: the REST service of submetrics.
//!
//! `submetrics-server [--listen ADDR:PORT] [--data-dir DIR]` serves the API;
//! `submetrics-server keys create|list|revoke` and `accounts create` manage
//! the database offline. On first start with an empty database it creates
//! an account and prints its owner key once (or takes
//! `SUBMETRICS_OWNER_KEY`).

mod auth;
mod error;
mod extract;
mod openapi;
mod routes;
mod state;
mod store;
mod stripe;

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
    /// Base URL of the Stripe API (a test server in tests).
    #[arg(
        long,
        env = "SUBMETRICS_STRIPE_API_BASE",
        default_value = "https://api.stripe.com",
        global = true
    )]
    stripe_api_base: String,
    /// Seconds between two polls of Stripe's events by a connected account.
    #[arg(
        long,
        env = "SUBMETRICS_STRIPE_POLL_SECONDS",
        default_value_t = 60,
        global = true
    )]
    stripe_poll_seconds: u64,
    /// Milliseconds of the first wait after a Stripe rate limit without
    /// Retry-After (doubled per attempt).
    #[arg(long, default_value_t = 1000, global = true)]
    stripe_backoff_ms: u64,
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
        Some(Command::Accounts {
            action: AccountAction::Create { name },
        }) => {
            let (id, key) = state.create_account(&name, None)?;
            println!("account {id} created; owner key (shown once): {key}");
            Ok(())
        }
        None => {
            state.stripe.configure(stripe::Config {
                api_base: args.stripe_api_base.clone(),
                poll: std::time::Duration::from_secs(args.stripe_poll_seconds.max(1)),
                backoff: std::time::Duration::from_millis(args.stripe_backoff_ms),
            });
            serve(state, &args.listen)
        }
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

fn serve(state: AppState, listen: &str) -> Result<(), Box<dyn std::error::Error>> {
    if state.account_count() == 0 {
        let given = owner_key_from_env();
        let from_env = given.is_some();
        let (_, key) = state.create_account("default", given)?;
        if !from_env {
            println!("created account `default`; owner API key (shown once): {key}");
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        println!("listening on http://{}", listener.local_addr()?);
        std::io::stdout().flush()?;
        // Turned into a service once: serving the router itself would
        // rebuild every route for each new connection.
        let state = Arc::new(state);
        stripe::resume(&state)?;
        let app = routes::router(state).into_make_service();
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok(())
    })
}
