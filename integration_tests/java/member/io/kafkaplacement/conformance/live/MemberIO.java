/*
 * kafka-placement live-test helper (our own code): what every Java member process shares with the test
 * harness: one JSON event per line on stdout, and "close" (or the end of stdin) to leave cleanly.
 */
package io.kafkaplacement.conformance.live;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;

final class MemberIO {
    private static final Object OUT = new Object();

    private MemberIO() {
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\');
            }
            b.append(c);
        }
        return b.append('"').toString();
    }

    /** Prints {body,"name":name,"t":epoch seconds} as one line; callable from any thread. */
    static void emit(String name, String body) {
        double t = System.currentTimeMillis() / 1000.0;
        synchronized (OUT) {
            System.out.println("{" + body + ",\"name\":" + quote(name) + ",\"t\":" + t + "}");
            System.out.flush();
        }
    }

    /** Starts a daemon thread reading stdin; the flag turns true on a "close" line or when stdin ends. */
    static AtomicBoolean closeOnStdin() {
        AtomicBoolean closing = new AtomicBoolean(false);
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.trim().equals("close")) {
                        break;
                    }
                }
            } catch (Exception ignored) {
                // stdin closed: leave as well
            }
            closing.set(true);
        });
        stdin.setDaemon(true);
        stdin.start();
        return closing;
    }
}
