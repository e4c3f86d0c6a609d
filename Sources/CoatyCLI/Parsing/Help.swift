import CoatyCommunication
import CoatyCore

/// The help texts of `coaty` and its subcommands.
enum Help {
    static let version = "coaty \(CoatyVersion.string) (Coaty MQTT protocol version \(CoatyTopic.protocolVersion))"

    static func text(for subcommand: String?) -> String {
        switch subcommand {
        case "broker": broker
        case "monitor": monitor
        case "discover": discover
        case "call": call
        case "router": router
        default: overview
        }
    }

    static let overview = """
        OVERVIEW: Tools for Coaty agents: an MQTT broker, and clients that watch and talk to agents.

        USAGE: coaty <subcommand> [options]

        SUBCOMMANDS:
          broker      Run the embedded MQTT 3.1.1 broker.
          monitor     Print every Coaty event in a namespace, one line each.
          discover    List the agents present (Discover of their identities).
          call        Call a remote operation and print its returns.
          router      Route the IO values of an IO context (an IO router agent).

        OPTIONS:
          --version   Show the version.
          -h, --help  Show help. 'coaty help <subcommand>' or 'coaty <subcommand> --help' shows a subcommand's.
        """

    private static let connectionOptions = """
          -b, --broker <url>      The broker, mqtt://host:port, mqtts://host:port (TLS, port 8883 by default),
                                  ws://host:port/path or wss://host:port/path; repeat it for brokers to fail
                                  over to, in order. (default: mqtt://127.0.0.1:1883)
          -n, --namespace <ns>    The Coaty namespace. (default: -)
          -u, --username <name>   MQTT user name.
          -P, --password <pw>     MQTT password (with --username).
          --cafile <file>         mqtts/wss: trust the CA certificates in this PEM file. (default: the system's)
          --cert <file>           mqtts/wss: present this client certificate (PEM; with --key).
          --key <file>            mqtts/wss: the client certificate's private key (PEM).
          --insecure              mqtts/wss: do not verify the broker's certificate (warns; tests only).

        ENVIRONMENT (the command line wins):
          COATY_BROKER_URL, COATY_NAMESPACE, COATY_USERNAME, COATY_PASSWORD
                                  Defaults for --broker, --namespace, --username and --password;
                                  COATY_PASSWORD keeps the password out of the process list;
                                  COATY_BROKER_URL takes several brokers separated by commas.
        """

    static let broker = """
        OVERVIEW: Run the embedded MQTT 3.1.1 broker until interrupted (Ctrl-C).

        USAGE: coaty broker [--host <host>] [--port <port>] [--ws-port <port>] [--max-packet-size <bytes>] [--password-file <file>] [--acl-file <file>] [--allow-anonymous true|false] [--username <name> --password <pw>] [--tls-port <port> [--wss-port <port>] --cert <file> --key <file> [--cafile <file> [--require-certificate]]] [--data-dir <dir> [--sync-interval <seconds>]] [--verbose]

        OPTIONS:
          --host <host>               The address to listen on. (default: 127.0.0.1)
          -p, --port <port>           The TCP port; 0 picks a free one. (default: 1883)
          --ws-port <port>            Also accept MQTT over WebSocket (ws://) on this port; 0 picks a free one. (default: off)
          --tls-port <port>           Also accept MQTT over TLS (mqtts://) on this port; 0 picks a free one. (default: off)
          --wss-port <port>           With --tls-port, also accept MQTT over WebSocket over TLS (wss://) on this port.
          --cert <file>               The TLS listener's certificate (PEM, then any intermediate CAs).
          --key <file>                Its private key (PEM, unencrypted).
          --cafile <file>             Check client certificates against these CAs (PEM).
          --require-certificate       Refuse TLS clients without a certificate from --cafile.
          --max-packet-size <bytes>   Disconnect clients that send larger packets.
          --password-file <file>      Accept the users of this mosquitto password file (mosquitto_passwd).
          --acl-file <file>           Restrict topics with this mosquitto ACL file (user, topic, pattern lines).
          --allow-anonymous <bool>    Accept clients without a user name: true or false.
                                      (default: true, false with a password file or --username)
          -u, --username <name>       Also accept this user name (with --password).
          -P, --password <pw>         Its password; visible in the process list (ps): prefer the environment.
          --data-dir <dir>            Keep persistent sessions, their queued messages and retained messages
                                      in this directory across restarts. (default: off, memory only)
          --sync-interval <seconds>   With --data-dir, write and sync changes this often: the most a crash
                                      (SIGKILL, power loss) can lose; SIGTERM and Ctrl-C lose nothing. (default: 1)
          -v, --verbose               Log connects, subscriptions and every message.
          -h, --help                  Show help.

        ENVIRONMENT (the command line wins):
          COATY_BROKER_USERNAME, COATY_BROKER_PASSWORD
                                      Defaults for --username and --password.
        """

    static let monitor = """
        OVERVIEW: Connect to a broker and print every Coaty event in a namespace as a readable line:
        time, event, source agent, object type and name, correlation id. Coloured on a terminal (not when
        piped, or with NO_COLOR set); reconnects when the broker goes away, until interrupted (Ctrl-C).

        USAGE: coaty monitor [--broker <url>] [--namespace <ns>] [--all-namespaces] [--count <n>] [--payload] [--json] [--sys]

        OPTIONS:
        \(connectionOptions)
          -a, --all-namespaces    Watch every namespace.
          -c, --count <n>         Exit after n lines (events, and with --sys statistics).
          --payload               Also print each payload.
          --json                  Print one JSON object per line instead, for scripts.
          --sys                   Also show the broker's $SYS/# statistics, as topic = value.
          -h, --help              Show help.
        """

    static let discover = """
        OVERVIEW: Discover the agents present: publish a Discover for identities and list every Resolve.

        USAGE: coaty discover [--broker <url>] [--namespace <ns>] [--timeout <seconds>]

        OPTIONS:
        \(connectionOptions)
          -t, --timeout <seconds> How long to collect answers. (default: 2)
          -h, --help              Show help.
        """

    static let call = """
        OVERVIEW: Call a remote operation and print its Returns: exits as soon as --count of them arrived,
        else at the timeout; with status 1 if none arrived or one carries an error.

        USAGE: coaty call <operation> [--params <json>] [--count <n>] [--broker <url>] [--namespace <ns>] [--timeout <seconds>]

        ARGUMENTS:
          <operation>             The operation name, e.g. com.example.lights.switchLight.

        OPTIONS:
          --params <json>         Parameters: a JSON object (by name) or array (by position).
        \(connectionOptions)
          -c, --count <n>         How many Returns to wait for. (default: 1)
          -t, --timeout <seconds> How long to wait for them. (default: 2)
          -h, --help              Show help.
        """

    static let router = """
        OVERVIEW: Run an IO router agent until interrupted (Ctrl-C): it associates every compatible IO source
        and IO actor of the agents' IO nodes named like the context, and prints each Associate it sees.

        USAGE: coaty router <context> [--count <n>] [--broker <url>] [--namespace <ns>]

        ARGUMENTS:
          <context>               The IO context name, e.g. Kitchen.

        OPTIONS:
        \(connectionOptions)
          -c, --count <n>         Exit after n Associate events.
          -h, --help              Show help.
        """
}
