/// What tours cover: every reachable scene, or every link that can be taken.
public enum Coverage: String, Sendable, Hashable, CaseIterable {
    case scenes
    case links
}
