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
mod command_line;
mod environment;
mod error;
mod extract;
mod openapi;
mod outbound;
mod rate;
mod routes;
mod serve;
mod session;
mod state;
mod store;
mod stripe;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use state::AppState;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use store::{AccountReads, UserReads};

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
    /// Most connections open at once; a connection over it is answered
    /// 503 with Retry-After and closed.
    #[arg(
        long,
        env = "SUBMETRICS_MAX_CONNECTIONS",
        default_value_t = 1024,
        value_parser = clap::value_parser!(u32).range(1..),
        global = true
    )]
    max_connections: u32,
    /// Seconds a client has to send a request's head; a kept-alive
    /// connection idle this long is closed.
    #[arg(
        long,
        env = "SUBMETRICS_HEADER_TIMEOUT",
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..),
        global = true
    )]
    header_timeout: u64,
    /// Seconds a request's whole body may take to arrive once its route
    /// starts reading it; a body still incomplete then is answered 408 and
    /// the connection closed.
    #[arg(
        long,
        env = "SUBMETRICS_BODY_TIMEOUT",
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..),
        global = true
    )]
    body_timeout: u64,
    /// Seconds a write may wait for a client that does not read its answer.
    #[arg(
        long,
        env = "SUBMETRICS_WRITE_TIMEOUT",
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..),
        global = true
    )]
    write_timeout: u64,
    /// Milliseconds a write waits for the database while another process
    /// holds its write lock, before it is answered 503. Reads never wait
    /// for it.
    #[arg(
        long,
        env = "SUBMETRICS_BUSY_TIMEOUT",
        default_value_t = 5000,
        value_parser = clap::value_parser!(u64).range(0..=3_600_000),
        global = true
    )]
    busy_timeout: u64,
    /// Seconds the requests under way get to finish after SIGTERM or SIGINT.
    #[arg(
        long,
        env = "SUBMETRICS_DRAIN_TIMEOUT",
        default_value_t = 30,
        global = true
    )]
    drain_timeout: u64,
    /// Most threads doing storage and ledger work at once; further work
    /// waits for one.
    #[arg(
        long,
        env = "SUBMETRICS_WORKER_THREADS",
        default_value_t = 64,
        value_parser = clap::value_parser!(u32).range(1..),
        global = true
    )]
    worker_threads: u32,
    /// Requests a second each API key may send (in bursts of as many);
    /// over it, 429 with Retry-After. 0: no limit.
    #[arg(
        long,
        env = "SUBMETRICS_RATE_LIMIT",
        default_value_t = 0,
        global = true
    )]
    rate_limit: u32,
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
    let matches = Args::command().get_matches();
    let args = Args::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
    if let Err(error) = command_line::unread_options(&Args::command(), &matches) {
        eprintln!("error: {error}");
        return std::process::ExitCode::FAILURE;
    }
    let variables = std::env::vars_os().filter_map(|(name, _)| name.into_string().ok());
    match environment::unread_variables(&Args::command(), variables) {
        Ok(warnings) => warnings.iter().for_each(|warning| eprintln!("{warning}")),
        Err(error) => {
            eprintln!("error: {error}");
            return std::process::ExitCode::FAILURE;
        }
    }
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
    let mut state = AppState::open(&args.data_dir)?;
    if args.rate_limit > 0 {
        state.limit_rate(rate::RateLimiter::new(args.rate_limit));
    }
    state.set_body_timeout(Duration::from_secs(args.body_timeout));
    state.set_busy_timeout(Duration::from_millis(args.busy_timeout))?;
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
        None => {
            state.stripe.configure(stripe::Config {
                api_base: args.stripe_api_base.clone(),
                poll: Duration::from_secs(args.stripe_poll_seconds.max(1)),
                backoff: Duration::from_millis(args.stripe_backoff_ms),
            });
            let limits = serve::Limits {
                max_connections: args.max_connections as usize,
                header_timeout: Duration::from_secs(args.header_timeout),
                write_timeout: Duration::from_secs(args.write_timeout),
                drain_timeout: Duration::from_secs(args.drain_timeout),
            };
            run_service(
                state,
                &args.listen,
                limits,
                args.worker_threads as usize,
                args.outbound.config()?,
            )
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
                for member in routes::team_members(&*state.store(), account)? {
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

/// Serves until SIGTERM or SIGINT, lets the requests under way finish,
/// stops the events machinery and closes the database.
fn run_service(
    state: AppState,
    listen: &str,
    limits: serve::Limits,
    worker_threads: usize,
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
    // A first login needs a stored invitation: none while writes fail.
    let setup = match state.storage_problem() {
        Some(problem) => {
            eprintln!("warning: {problem}; /health reports it and writes will fail");
            None
        }
        None => owner_setup(&state)?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(worker_threads)
        .build()?;
    let state = Arc::new(state);
    outbound::Outbound::start(&state, outbound);
    stripe::resume(&state)?;
    let served: Result<(), Box<dyn std::error::Error>> = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|error| cannot_listen(listen, &error))?;
        let address = listener.local_addr()?;
        println!("listening on http://{address}");
        println!("dashboard: http://{address}/app/");
        if let Some(token) = &setup {
            println!(
                "first login: open http://{address}{} to set the owner's email and password (valid 7 days)",
                session::invitation_path(token)
            );
        }
        std::io::stdout().flush()?;
        let app = routes::router(Arc::clone(&state));
        serve::serve(listener, app, limits, serve::stop_signal()).await?;
        Ok(())
    });
    // Waits for storage work still running on the blocking threads.
    drop(runtime);
    state.outbound.stop();
    served?;
    close_when_released(state)?;
    println!("stopped");
    Ok(())
}

/// Closes the database once the events scanner has let go of the state
/// and the dispatcher and its deliveries of the event tables (each returns
/// at its next wait after [`outbound::Outbound::stop`]), so that the
/// store's connection is the last one open and its close folds the
/// write-ahead log into the database file and removes it. After five
/// seconds the process exit closes the database instead.
fn close_when_released(mut state: Arc<AppState>) -> Result<(), Box<dyn std::error::Error>> {
    for _ in 0..50 {
        if Arc::strong_count(&state.outbound) == 1 {
            match Arc::try_unwrap(state) {
                Ok(state) => return Ok(state.close()?),
                Err(shared) => state = shared,
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("warning: the database was left for the process exit to close");
    Ok(())
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
