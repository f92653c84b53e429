//! `epic-model-server --steps FILE [--log FILE] [--port-file FILE]`: the scripted model server
//! for one case, until killed. Its first line on standard output is `127.0.0.1:PORT`.

use std::path::PathBuf;
use std::process::ExitCode;

use epic_model_server::{Config, Script, Server};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            #[expect(clippy::print_stderr, reason = "the binary's one way to say why")]
            {
                eprintln!("epic-model-server: {message}");
            }
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut steps = None;
    let mut log = None;
    let mut port_file = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .map(PathBuf::from)
            .ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--steps" => steps = Some(value),
            "--log" => log = Some(value),
            "--port-file" => port_file = Some(value),
            _ => {
                return Err(format!(
                    "unknown argument {flag}; usage: epic-model-server --steps FILE [--log FILE] [--port-file FILE]"
                ));
            }
        }
    }
    let script = match steps {
        Some(path) => {
            let text = std::fs::read_to_string(&path)
                .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
            Script::parse(&text).map_err(|error| {
                format!(
                    "{}: {error}: {}",
                    path.display(),
                    std::error::Error::source(&error).map_or_else(String::new, ToString::to_string)
                )
            })?
        }
        None => Script::default(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| format!("cannot start the runtime: {error}"))?;
    runtime.block_on(async {
        let server = Server::start(Config { script, log })
            .await
            .map_err(|error| format!("cannot listen on 127.0.0.1: {error}"))?;
        let addr = server.addr().to_string();
        if let Some(path) = port_file {
            std::fs::write(&path, &addr)
                .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        }
        #[expect(clippy::print_stdout, reason = "the address is the binary's output")]
        {
            println!("{addr}");
        }
        std::future::pending::<()>().await;
        drop(server);
        Ok(())
    })
}
