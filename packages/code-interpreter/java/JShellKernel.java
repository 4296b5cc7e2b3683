import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import jdk.jshell.EvalException;
import jdk.jshell.ExpressionSnippet;
import jdk.jshell.JShell;
import jdk.jshell.JShellException;
import jdk.jshell.Snippet;
import jdk.jshell.SnippetEvent;
import jdk.jshell.SourceCodeAnalysis;
import jdk.jshell.VarSnippet;

/**
 * The Java kernel of the code interpreter: a JShell evaluating in this JVM, speaking the line
 * protocol of src/kernels/protocol.ts. Requests arrive on stdin; events leave on this process's
 * real stdout (Java cannot write to an inherited descriptor by number), while System.out and
 * System.err are replaced by streams that turn the cell's output into stream events.
 */
public final class JShellKernel {
    private static final PrintStream EVENTS = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
    private static volatile String current = "";
    private static int count = 0;

    public static void main(String[] args) throws Exception {
        System.setOut(new PrintStream(new CellStream("stdout"), true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(new CellStream("stderr"), true, StandardCharsets.UTF_8));
        JShell shell = JShell.builder().executionEngine("local").build();
        SourceCodeAnalysis analysis = shell.sourceCodeAnalysis();
        ExecutorService cells = Executors.newSingleThreadExecutor();
        emit(Map.of("ev", "ready"));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            Map<String, Object> req = Json.parseObject(line);
            String op = String.valueOf(req.get("op"));
            if (op.equals("execute")) {
                String id = String.valueOf(req.get("id"));
                String code = String.valueOf(req.get("code"));
                boolean silent = Boolean.TRUE.equals(req.get("silent"));
                cells.submit(() -> run(shell, analysis, id, code, silent));
            } else if (op.equals("interrupt")) {
                shell.stop();
            } else if (op.equals("shutdown")) {
                break;
            }
        }
        System.exit(0);
    }

    private static void run(JShell shell, SourceCodeAnalysis analysis, String id, String code, boolean silent) {
        current = id;
        try {
            if (!silent) emit(Map.of("ev", "count", "id", id, "n", ++count));
            String rest = code;
            String lastValue = null;
            while (!rest.isBlank()) {
                SourceCodeAnalysis.CompletionInfo info = analysis.analyzeCompletion(rest);
                String source = info.source() != null ? info.source() : rest;
                rest = info.source() != null ? info.remaining() : "";
                for (SnippetEvent e : shell.eval(source)) {
                    if (e.causeSnippet() != null) continue;
                    JShellException ex = e.exception();
                    if (ex != null) {
                        error(id, ex);
                        return;
                    }
                    if (e.status() == Snippet.Status.REJECTED) {
                        String message = shell.diagnostics(e.snippet()).map(d -> d.getMessage(null)).collect(Collectors.joining("\n"));
                        emitError(id, "CompilationException", message, List.of(message));
                        return;
                    }
                    lastValue = valueOf(e);
                }
            }
            if (!silent && lastValue != null) {
                Map<String, Object> data = new HashMap<>();
                data.put("text/plain", lastValue);
                emit(Map.of("ev", "result", "id", id, "main", true, "data", data));
            }
        } catch (Throwable t) {
            emitError(id, t.getClass().getSimpleName(), String.valueOf(t.getMessage()), List.of(t.toString()));
        } finally {
            System.out.flush();
            System.err.flush();
            emit(Map.of("ev", "done", "id", id));
        }
    }

    /** The value an expression or a variable's initialiser shows; strings without JShell's quotes. */
    private static String valueOf(SnippetEvent e) {
        String value = e.value();
        if (value == null || value.isEmpty()) return null;
        Snippet s = e.snippet();
        String type = s instanceof ExpressionSnippet ? ((ExpressionSnippet) s).typeName()
                : s instanceof VarSnippet ? ((VarSnippet) s).typeName() : null;
        if (s instanceof VarSnippet && s.subKind() != Snippet.SubKind.TEMP_VAR_EXPRESSION_SUBKIND) return null;
        if ("String".equals(type) && value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
            return Json.unescapeJava(value.substring(1, value.length() - 1));
        }
        return value;
    }

    private static void error(String id, JShellException ex) {
        String name = ex instanceof EvalException ? ((EvalException) ex).getExceptionClassName() : ex.getClass().getName();
        List<String> trace = new ArrayList<>();
        trace.add(name + ": " + ex.getMessage());
        for (StackTraceElement el : ex.getStackTrace()) trace.add("\tat " + el);
        emitError(id, name.substring(name.lastIndexOf('.') + 1), String.valueOf(ex.getMessage()), trace);
    }

    private static void emitError(String id, String name, String value, List<String> traceback) {
        emit(Map.of("ev", "error", "id", id, "name", name, "value", value, "traceback", traceback));
    }

    static synchronized void emit(Map<String, ?> event) {
        EVENTS.println(Json.write(event));
        EVENTS.flush();
    }

    /** A cell's System.out or System.err: each write is a stream event of the running cell. */
    private static final class CellStream extends OutputStream {
        private final String name;
        private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();

        CellStream(String name) {
            this.name = name;
        }

        @Override
        public synchronized void write(int b) {
            buffer.write(b);
            if (b == '\n') flush();
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            buffer.write(b, off, len);
            flush();
        }

        @Override
        public synchronized void flush() {
            if (buffer.size() == 0) return;
            String text = buffer.toString(StandardCharsets.UTF_8);
            buffer.reset();
            emit(Map.of("ev", "stream", "id", current, "name", name, "text", text));
        }
    }

    /** Just enough JSON for the protocol: flat request objects in, events out. */
    static final class Json {
        static Map<String, Object> parseObject(String s) {
            Map<String, Object> out = new HashMap<>();
            int[] i = {skip(s, 0)};
            expect(s, i, '{');
            while (true) {
                i[0] = skip(s, i[0]);
                if (s.charAt(i[0]) == '}') break;
                String key = string(s, i);
                i[0] = skip(s, i[0]);
                expect(s, i, ':');
                i[0] = skip(s, i[0]);
                char c = s.charAt(i[0]);
                Object value;
                if (c == '"') value = string(s, i);
                else if (s.startsWith("true", i[0])) { value = Boolean.TRUE; i[0] += 4; }
                else if (s.startsWith("false", i[0])) { value = Boolean.FALSE; i[0] += 5; }
                else if (s.startsWith("null", i[0])) { value = null; i[0] += 4; }
                else {
                    int start = i[0];
                    while (i[0] < s.length() && "-+.eE0123456789".indexOf(s.charAt(i[0])) >= 0) i[0]++;
                    value = s.substring(start, i[0]);
                }
                out.put(key, value);
                i[0] = skip(s, i[0]);
                if (s.charAt(i[0]) == ',') i[0]++;
            }
            return out;
        }

        private static int skip(String s, int i) {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
            return i;
        }

        private static void expect(String s, int[] i, char c) {
            if (s.charAt(i[0]) != c) throw new IllegalArgumentException("expected " + c + " at " + i[0]);
            i[0]++;
        }

        private static String string(String s, int[] i) {
            expect(s, i, '"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = s.charAt(i[0]++);
                if (c == '"') return b.toString();
                if (c != '\\') { b.append(c); continue; }
                char e = s.charAt(i[0]++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u': b.append((char) Integer.parseInt(s.substring(i[0], i[0] + 4), 16)); i[0] += 4; break;
                    default: b.append(e);
                }
            }
        }

        static String unescapeJava(String s) {
            return string("\"" + s + "\"", new int[] {0});
        }

        static String write(Object v) {
            if (v == null) return "null";
            if (v instanceof Boolean || v instanceof Number) return v.toString();
            if (v instanceof Map) {
                return ((Map<?, ?>) v).entrySet().stream()
                        .map(e -> write(String.valueOf(e.getKey())) + ":" + write(e.getValue()))
                        .collect(Collectors.joining(",", "{", "}"));
            }
            if (v instanceof List) {
                return ((List<?>) v).stream().map(Json::write).collect(Collectors.joining(",", "[", "]"));
            }
            String s = v.toString();
            StringBuilder b = new StringBuilder("\"");
            for (char c : s.toCharArray()) {
                switch (c) {
                    case '"': b.append("\\\""); break;
                    case '\\': b.append("\\\\"); break;
                    case '\n': b.append("\\n"); break;
                    case '\r': b.append("\\r"); break;
                    case '\t': b.append("\\t"); break;
                    default:
                        if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                        else b.append(c);
                }
            }
            return b.append('"').toString();
        }
    }
}
