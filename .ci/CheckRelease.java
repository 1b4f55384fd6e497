import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * Opens the artifacts that {@code mvn -Prelease package} built and checks what a release needs; run from the
 * repository root with {@code java .ci/CheckRelease.java} (a JDK 17 single-file program, no dependencies).
 * <p>
 * A module is published when its POM sets {@code publish.skip} to {@code false}. For each published module: the
 * jar, sources jar and javadoc jar exist and carry the root's LICENSE and NOTICE under META-INF; the jar's manifest
 * has Automatic-Module-Name, Implementation-Title and Implementation-Version; the flattened POM has no parent, a
 * version on every dependency, and the licenses, url, scm and developers Maven Central requires; the
 * auto-configuration imports file lists exactly the classes annotated {@code @AutoConfiguration} in the jar; a
 * jar with {@code @ConfigurationProperties} classes carries configuration metadata naming each of them (the
 * autoconfigure jar must). The BOM manages exactly the published modules; unpublished modules get no sources,
 * javadoc or flattened POM. Exits 1, listing every failure, when anything is missing. With a second argument,
 * lays out the published POMs and jars there as a Maven repository, for the consumer build of .ci/check-release.
 */
public class CheckRelease {

    static final String AUTO_CONFIGURATION = "Lorg/springframework/boot/autoconfigure/AutoConfiguration;";
    static final String CONFIGURATION_PROPERTIES = "Lorg/springframework/boot/context/properties/ConfigurationProperties;";
    static final String IMPORTS = "META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports";
    static final String METADATA = "META-INF/spring-configuration-metadata.json";

    /** The JPMS name each published jar must declare; a published module missing here fails the check. */
    static final Map<String, String> MODULE_NAMES = Map.of(
            "rate-limit-core", "io.github.ratelimit.core",
            "rate-limit-redis", "io.github.ratelimit.redis",
            "rate-limit-autoconfigure", "io.github.ratelimit.autoconfigure",
            "rate-limit-spring-boot-starter", "io.github.ratelimit.starter",
            "rate-limit-gateway", "io.github.ratelimit.gateway",
            "rate-limit-test", "io.github.ratelimit.test");

    final List<String> failures = new ArrayList<>();
    int checks;
    String version;
    String springBootVersion;
    /** What a user downloads of each published module: its POM and (but for the BOM) its jar. */
    final Map<String, Path> stagedPoms = new TreeMap<>();
    final Map<String, Path> stagedJars = new TreeMap<>();

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args.length > 0 ? args[0] : ".").toAbsolutePath().normalize();
        CheckRelease check = new CheckRelease();
        check.run(root);
        if (!check.failures.isEmpty()) {
            System.err.println("release artifacts: " + check.failures.size() + " of " + check.checks + " checks do not hold:");
            check.failures.forEach(f -> System.err.println("  - " + f));
            System.exit(1);
        }
        System.out.println("release artifacts: all " + check.checks + " checks hold");
        if (args.length > 1) {
            check.stage(root, Path.of(args[1]));
        }
    }

    /**
     * Lays out the published artifacts (the POM a user downloads, the jar) as a Maven repository in {@code staging},
     * for a consumer build that must resolve them without anything else of ours; writes the version to
     * {@code staging/version} and the Spring Boot version built against to {@code staging/spring-boot.version}.
     */
    void stage(Path root, Path staging) throws IOException {
        for (Map.Entry<String, Path> pom : this.stagedPoms.entrySet()) {
            String artifactId = pom.getKey();
            Path dir = staging.resolve("io/github/ratelimit").resolve(artifactId).resolve(this.version);
            Files.createDirectories(dir);
            Files.copy(pom.getValue(), dir.resolve(artifactId + "-" + this.version + ".pom"), StandardCopyOption.REPLACE_EXISTING);
            Path jar = this.stagedJars.get(artifactId);
            if (jar != null) {
                Files.copy(jar, dir.resolve(artifactId + "-" + this.version + ".jar"), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        Files.writeString(staging.resolve("version"), this.version);
        Files.writeString(staging.resolve("spring-boot.version"), this.springBootVersion);
        System.out.println("staged " + this.stagedPoms.keySet() + " in " + staging);
    }

    void check(boolean holds, String what) {
        checks++;
        if (!holds) {
            failures.add(what);
        }
    }

    void run(Path root) throws Exception {
        Document parent = xml(root.resolve("pom.xml"));
        String version = text(parent.getDocumentElement(), "version");
        this.version = version;
        this.springBootVersion = text(child(parent.getDocumentElement(), "parent"), "version");
        this.stagedPoms.put("rate-limit-bom", root.resolve("rate-limit-bom/pom.xml"));
        byte[] license = Files.readAllBytes(root.resolve("LICENSE"));
        byte[] notice = Files.readAllBytes(root.resolve("NOTICE"));
        check(new String(license, StandardCharsets.US_ASCII).contains("Apache License") && new String(license,
                StandardCharsets.US_ASCII).contains("Version 2.0, January 2004"), "LICENSE is the Apache License 2.0");

        Element parentProperties = child(parent.getDocumentElement(), "properties");
        check("true".equals(text(parentProperties, "publish.skip")) && "${publish.skip}".equals(text(parentProperties, "maven.deploy.skip")),
                "rate-limit-parent is not published and deploys a module only when it sets publish.skip to false");
        Set<String> published = new TreeSet<>();
        for (Element module : children(child(parent.getDocumentElement(), "modules"), "module")) {
            String dir = module.getTextContent().trim();
            Element pom = xml(root.resolve(dir).resolve("pom.xml")).getDocumentElement();
            String artifactId = text(pom, "artifactId");
            if (artifactId.equals("rate-limit-bom")) {
                checkBom(pom, version);
                continue;
            }
            Element properties = child(pom, "properties");
            boolean isPublished = properties != null && "false".equals(text(properties, "publish.skip"));
            Path target = root.resolve(dir).resolve("target");
            if (isPublished) {
                published.add(artifactId);
                checkPublished(target, artifactId, version, license, notice);
            }
            else if (properties != null && "false".equals(text(properties, "maven.deploy.skip"))) {
                check(false, artifactId + " sets maven.deploy.skip to false without publish.skip false: it would be deployed unchecked");
            }
            else if (!"pom".equals(text(pom, "packaging"))) {
                for (String classifier : List.of("sources", "javadoc")) {
                    check(!Files.exists(target.resolve(artifactId + "-" + version + "-" + classifier + ".jar")),
                            artifactId + " is not published, yet has a " + classifier + " jar");
                }
                check(!Files.exists(target.resolve(".flattened-pom.xml")),
                        artifactId + " is not published, yet has a flattened POM");
            }
        }
        check(published.containsAll(MODULE_NAMES.keySet()), "published modules " + published + " include " + MODULE_NAMES.keySet());
        Element bom = xml(root.resolve("rate-limit-bom/pom.xml")).getDocumentElement();
        Set<String> managed = new TreeSet<>();
        for (Element dependency : children(child(child(bom, "dependencyManagement"), "dependencies"), "dependency")) {
            managed.add(text(dependency, "artifactId"));
        }
        check(managed.equals(published), "rate-limit-bom manages " + managed + ", the published modules are " + published);
    }

    void checkBom(Element bom, String version) {
        check(child(bom, "parent") == null, "rate-limit-bom has no parent");
        check(version.equals(text(bom, "version")), "rate-limit-bom's version " + text(bom, "version") + " is the parent's " + version);
        check("pom".equals(text(bom, "packaging")), "rate-limit-bom has pom packaging");
        checkCentralElements(bom, "rate-limit-bom");
    }

    void checkCentralElements(Element pom, String name) {
        check(!text(pom, "name").isEmpty() && !text(pom, "description").isEmpty(), name + "'s POM has a name and a description");
        check(!text(pom, "url").isEmpty(), name + "'s POM has a url");
        Element licenses = child(pom, "licenses");
        check(licenses != null && children(licenses, "license").stream().anyMatch(l -> text(l, "name").contains("Apache")
                && text(l, "url").contains("LICENSE-2.0")), name + "'s POM declares the Apache License 2.0");
        Element scm = child(pom, "scm");
        check(scm != null && !text(scm, "url").isEmpty() && !text(scm, "connection").isEmpty(), name + "'s POM has an scm url and connection");
        Element developers = child(pom, "developers");
        check(developers != null && !children(developers, "developer").isEmpty(), name + "'s POM names a developer");
    }

    void checkPublished(Path target, String artifactId, String version, byte[] license, byte[] notice) throws Exception {
        String base = artifactId + "-" + version;
        for (String suffix : List.of("", "-sources", "-javadoc")) {
            Path jar = target.resolve(base + suffix + ".jar");
            check(Files.isRegularFile(jar), jar.getFileName() + " was built");
            if (!Files.isRegularFile(jar)) {
                continue;
            }
            try (JarFile file = new JarFile(jar.toFile())) {
                check(Arrays.equals(license, bytes(file, "META-INF/LICENSE")), jar.getFileName() + " has the root's LICENSE as META-INF/LICENSE");
                check(Arrays.equals(notice, bytes(file, "META-INF/NOTICE")), jar.getFileName() + " has the root's NOTICE as META-INF/NOTICE");
                if (suffix.equals("-javadoc")) {
                    check(file.getEntry("index.html") != null || file.getEntry("README.txt") != null,
                            jar.getFileName() + " holds javadoc (index.html) or, for a module without code, a README.txt");
                }
                if (suffix.isEmpty()) {
                    checkJar(file, jar.getFileName().toString(), artifactId, version);
                }
            }
        }
        Path flattened = target.resolve(".flattened-pom.xml");
        this.stagedPoms.put(artifactId, flattened);
        this.stagedJars.put(artifactId, target.resolve(base + ".jar"));
        check(Files.isRegularFile(flattened), artifactId + " has a flattened POM");
        if (Files.isRegularFile(flattened)) {
            Element pom = xml(flattened).getDocumentElement();
            check(child(pom, "parent") == null, artifactId + "'s flattened POM has no parent");
            check(version.equals(text(pom, "version")), artifactId + "'s flattened POM has version " + version);
            checkCentralElements(pom, artifactId + " (flattened)");
            Element dependencies = child(pom, "dependencies");
            for (Element dependency : dependencies == null ? List.<Element>of() : children(dependencies, "dependency")) {
                String id = text(dependency, "groupId") + ":" + text(dependency, "artifactId");
                check(!text(dependency, "version").isEmpty() && !text(dependency, "version").contains("${"),
                        artifactId + "'s flattened POM gives " + id + " a version");
                check(!"test".equals(text(dependency, "scope")), artifactId + "'s flattened POM has no test dependency " + id);
            }
        }
    }

    void checkJar(JarFile jar, String name, String artifactId, String version) throws IOException {
        Manifest manifest = jar.getManifest();
        var attributes = manifest == null ? new java.util.jar.Attributes() : manifest.getMainAttributes();
        check(MODULE_NAMES.containsKey(artifactId), artifactId + " has an expected Automatic-Module-Name in CheckRelease.MODULE_NAMES");
        check(MODULE_NAMES.getOrDefault(artifactId, "?").equals(attributes.getValue("Automatic-Module-Name")),
                name + " has Automatic-Module-Name " + MODULE_NAMES.get(artifactId) + " (found " + attributes.getValue("Automatic-Module-Name") + ")");
        check(artifactId.equals(attributes.getValue("Implementation-Title")), name + " has Implementation-Title " + artifactId);
        check(version.equals(attributes.getValue("Implementation-Version")), name + " has Implementation-Version " + version);

        Set<String> autoConfigurations = new TreeSet<>();
        Set<String> propertiesClasses = new TreeSet<>();
        for (Enumeration<JarEntry> entries = jar.entries(); entries.hasMoreElements();) {
            JarEntry entry = entries.nextElement();
            if (!entry.getName().endsWith(".class") || entry.getName().endsWith("module-info.class")) {
                continue;
            }
            Set<String> annotations = classAnnotations(bytes(jar, entry.getName()));
            String className = entry.getName().replace('/', '.').substring(0, entry.getName().length() - ".class".length());
            if (annotations.contains(AUTO_CONFIGURATION)) {
                autoConfigurations.add(className);
            }
            if (annotations.contains(CONFIGURATION_PROPERTIES)) {
                propertiesClasses.add(className);
            }
        }
        byte[] imports = bytes(jar, IMPORTS);
        Set<String> listed = new TreeSet<>();
        if (imports != null) {
            for (String line : new String(imports, StandardCharsets.UTF_8).split("\n")) {
                String entry = line.replaceFirst("#.*", "").trim();
                if (!entry.isEmpty()) {
                    listed.add(entry);
                }
            }
        }
        check(listed.equals(autoConfigurations), name + ": " + IMPORTS + " lists " + listed
                + ", the classes annotated @AutoConfiguration are " + autoConfigurations);

        if (artifactId.equals("rate-limit-autoconfigure")) {
            check(!propertiesClasses.isEmpty(), name + " has @ConfigurationProperties classes");
        }
        if (!propertiesClasses.isEmpty()) {
            byte[] metadata = bytes(jar, METADATA);
            check(metadata != null, name + " carries " + METADATA);
            Set<String> sourceTypes = new TreeSet<>();
            if (metadata != null) {
                Matcher matcher = Pattern.compile("\"sourceType\"\\s*:\\s*\"([^\"]+)\"").matcher(new String(metadata, StandardCharsets.UTF_8));
                while (matcher.find()) {
                    sourceTypes.add(matcher.group(1).replace('$', '.'));
                }
            }
            for (String type : propertiesClasses) {
                check(sourceTypes.contains(type.replace('$', '.')), name + "'s configuration metadata describes " + type);
            }
        }
    }

    /** The descriptors of the runtime-visible annotations on a class (not on its members), read from its class file. */
    static Set<String> classAnnotations(byte[] classFile) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(classFile));
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readUnsignedShort();
        in.readUnsignedShort();
        int count = in.readUnsignedShort();
        String[] utf8 = new String[count];
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> utf8[i] = in.readUTF();
                case 3, 4, 9, 10, 11, 12, 17, 18 -> in.readInt();
                case 5, 6 -> {
                    in.readLong();
                    i++;
                }
                case 7, 8, 16, 19, 20 -> in.readUnsignedShort();
                case 15 -> {
                    in.readUnsignedByte();
                    in.readUnsignedShort();
                }
                default -> throw new IOException("unknown constant pool tag " + tag);
            }
        }
        in.readUnsignedShort(); // access flags
        in.readUnsignedShort(); // this class
        in.readUnsignedShort(); // super class
        in.skipNBytes(2L * in.readUnsignedShort()); // interfaces
        for (int members = 0; members < 2; members++) { // fields, then methods
            int memberCount = in.readUnsignedShort();
            for (int m = 0; m < memberCount; m++) {
                in.skipNBytes(6);
                skipAttributes(in);
            }
        }
        Set<String> annotations = new TreeSet<>();
        int attributes = in.readUnsignedShort();
        for (int a = 0; a < attributes; a++) {
            String attributeName = utf8[in.readUnsignedShort()];
            int length = in.readInt();
            if (!"RuntimeVisibleAnnotations".equals(attributeName)) {
                in.skipNBytes(length);
                continue;
            }
            int annotationCount = in.readUnsignedShort();
            for (int n = 0; n < annotationCount; n++) {
                annotations.add(readAnnotation(in, utf8));
            }
        }
        return annotations;
    }

    static void skipAttributes(DataInputStream in) throws IOException {
        int count = in.readUnsignedShort();
        for (int a = 0; a < count; a++) {
            in.readUnsignedShort();
            in.skipNBytes(in.readInt() & 0xFFFFFFFFL);
        }
    }

    static String readAnnotation(DataInputStream in, String[] utf8) throws IOException {
        String type = utf8[in.readUnsignedShort()];
        int pairs = in.readUnsignedShort();
        for (int p = 0; p < pairs; p++) {
            in.readUnsignedShort();
            skipElementValue(in, utf8);
        }
        return type;
    }

    static void skipElementValue(DataInputStream in, String[] utf8) throws IOException {
        int tag = in.readUnsignedByte();
        switch (tag) {
            case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z', 's', 'c' -> in.readUnsignedShort();
            case 'e' -> in.readInt();
            case '@' -> readAnnotation(in, utf8);
            case '[' -> {
                int values = in.readUnsignedShort();
                for (int v = 0; v < values; v++) {
                    skipElementValue(in, utf8);
                }
            }
            default -> throw new IOException("unknown element value tag " + (char) tag);
        }
    }

    static byte[] bytes(JarFile jar, String name) throws IOException {
        JarEntry entry = jar.getJarEntry(name);
        if (entry == null) {
            return null;
        }
        try (InputStream in = jar.getInputStream(entry)) {
            return in.readAllBytes();
        }
    }

    static Document xml(Path file) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
    }

    static Element child(Element parent, String name) {
        if (parent == null) {
            return null;
        }
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element && element.getTagName().equals(name)) {
                return element;
            }
        }
        return null;
    }

    static List<Element> children(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        if (parent == null) {
            return found;
        }
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            if (nodes.item(i) instanceof Element element && element.getTagName().equals(name)) {
                found.add(element);
            }
        }
        return found;
    }

    static String text(Element parent, String name) {
        Element child = child(parent, name);
        return child == null ? "" : child.getTextContent().trim();
    }
}
