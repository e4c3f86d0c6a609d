/// A user (`coaty.User`), modelled on the SCIM core user schema (RFC 7643). The SCIM `userName` is the
/// object's ``CoatyObject/name``.
open class User: CoatyObject, @unchecked Sendable {
    /// `coaty.User`.
    override open class var objectType: String { CoreType.user.objectType }
    /// ``CoreType/user``.
    override public class var coreType: CoreType { .user }
    /// The user's own JSON keys.
    override open class var propertyKeys: Set<String> { Self.keys }
    private static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    /// The components of the user's real name.
    public let names: Names
    /// The name to display.
    public let displayName: String?
    /// A casual name.
    public let nickName: String?
    /// A title, such as "Vice President".
    public let title: String?
    /// The relationship to the organisation, such as "Employee".
    public let userType: String?
    /// The preferred language, such as `"en-US"`.
    public let preferredLanguage: String?
    /// The locale, such as `"en-US"`.
    public let locale: String?
    /// The time zone, such as `"Europe/Berlin"`.
    public let timezone: String?
    /// Whether the account is active.
    public let active: Bool?
    /// A password (usually omitted).
    public let password: String?
    /// E-mail addresses.
    public let emails: [Attribute]?
    /// Phone numbers.
    public let phoneNumbers: [Attribute]?
    /// Instant-messaging addresses.
    public let ims: [Attribute]?
    /// Photo URLs.
    public let photos: [Attribute]?
    /// Postal addresses.
    public let addresses: [Address]?
    /// Groups the user belongs to.
    public let groups: [Attribute]?
    /// Entitlements, as arbitrary JSON values.
    public let entitlements: [AnyCodable]?
    /// Roles (non-empty strings).
    public let roles: [String]?
    /// X.509 certificates (non-empty strings).
    public let x509Certificates: [String]?

    /// The components of a user's name (SCIM `name`). Either `formatted` (non-empty) or both
    /// `familyName` and `givenName` must be present.
    public struct Names: Sendable, Hashable, Codable {
        /// The full name, formatted for display.
        public var formatted: String?
        /// The family name.
        public var familyName: String?
        /// The given name.
        public var givenName: String?
        /// The middle name.
        public var middleName: String?
        /// A prefix such as "Ms.".
        public var honorificPrefix: String?
        /// A suffix such as "III".
        public var honorificSuffix: String?

        /// Creates names.
        public init(
            formatted: String? = nil,
            familyName: String? = nil,
            givenName: String? = nil,
            middleName: String? = nil,
            honorificPrefix: String? = nil,
            honorificSuffix: String? = nil
        ) {
            self.formatted = formatted
            self.familyName = familyName
            self.givenName = givenName
            self.middleName = middleName
            self.honorificPrefix = honorificPrefix
            self.honorificSuffix = honorificSuffix
        }

        private enum CodingKeys: String, CodingKey {
            case formatted, familyName, givenName, middleName, honorificPrefix, honorificSuffix
        }

        /// Decodes and validates names as coaty-js does.
        ///
        /// - Throws: `DecodingError` if `formatted` is empty, only one of `familyName`/`givenName` is
        ///   present, neither `formatted` nor `familyName` is present, or a field is `null` or not a string.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.formatted = try container.decodeNonEmptyStringIfPresent(forKey: .formatted)
            self.familyName = try container.decodeStrictIfPresent(String.self, forKey: .familyName)
            self.givenName = try container.decodeStrictIfPresent(String.self, forKey: .givenName)
            self.middleName = try container.decodeStrictIfPresent(String.self, forKey: .middleName)
            self.honorificPrefix = try container.decodeStrictIfPresent(String.self, forKey: .honorificPrefix)
            self.honorificSuffix = try container.decodeStrictIfPresent(String.self, forKey: .honorificSuffix)
            guard (self.familyName == nil) == (self.givenName == nil) else {
                throw container.invalid(.familyName, "and givenName must be given together")
            }
            guard self.formatted != nil || self.familyName != nil else {
                throw container.invalid(.formatted, "or familyName and givenName are required")
            }
        }
    }

    /// A SCIM multi-valued attribute such as an e-mail address.
    public struct Attribute: Sendable, Hashable, Codable {
        /// The kind, such as `"work"`.
        public var type: String
        /// The value, such as the address.
        public var value: String
        /// Whether this is the primary value.
        public var primary: Bool?
        /// A display name.
        public var display: String?

        /// Creates an attribute.
        public init(type: String, value: String, primary: Bool? = nil, display: String? = nil) {
            self.type = type
            self.value = value
            self.primary = primary
            self.display = display
        }

        private enum CodingKeys: String, CodingKey {
            case type, value, primary, display
        }

        /// Decodes an attribute.
        ///
        /// - Throws: `DecodingError` naming a missing, `null` or mistyped field.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.type = try container.decode(String.self, forKey: .type)
            self.value = try container.decode(String.self, forKey: .value)
            self.primary = try container.decodeStrictIfPresent(Bool.self, forKey: .primary)
            self.display = try container.decodeStrictIfPresent(String.self, forKey: .display)
        }
    }

    /// A SCIM postal address.
    public struct Address: Sendable, Hashable, Codable {
        /// The kind, such as `"work"`.
        public var type: String
        /// The value.
        public var value: String
        /// Whether this is the primary address.
        public var primary: Bool?
        /// A display name.
        public var display: String?
        /// The full address, formatted for display.
        public var formatted: String?
        /// The street.
        public var streetAddress: String?
        /// The city.
        public var locality: String?
        /// The state or region.
        public var region: String?
        /// The postal code.
        public var postalCode: String?
        /// The country.
        public var country: String?

        /// Creates an address.
        public init(
            type: String,
            value: String,
            primary: Bool? = nil,
            display: String? = nil,
            formatted: String? = nil,
            streetAddress: String? = nil,
            locality: String? = nil,
            region: String? = nil,
            postalCode: String? = nil,
            country: String? = nil
        ) {
            self.type = type
            self.value = value
            self.primary = primary
            self.display = display
            self.formatted = formatted
            self.streetAddress = streetAddress
            self.locality = locality
            self.region = region
            self.postalCode = postalCode
            self.country = country
        }

        private enum CodingKeys: String, CodingKey {
            case type, value, primary, display, formatted, streetAddress, locality, region, postalCode, country
        }

        /// Decodes an address.
        ///
        /// - Throws: `DecodingError` naming a missing, `null` or mistyped field.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.type = try container.decode(String.self, forKey: .type)
            self.value = try container.decode(String.self, forKey: .value)
            self.primary = try container.decodeStrictIfPresent(Bool.self, forKey: .primary)
            self.display = try container.decodeStrictIfPresent(String.self, forKey: .display)
            self.formatted = try container.decodeStrictIfPresent(String.self, forKey: .formatted)
            self.streetAddress = try container.decodeStrictIfPresent(String.self, forKey: .streetAddress)
            self.locality = try container.decodeStrictIfPresent(String.self, forKey: .locality)
            self.region = try container.decodeStrictIfPresent(String.self, forKey: .region)
            self.postalCode = try container.decodeStrictIfPresent(String.self, forKey: .postalCode)
            self.country = try container.decodeStrictIfPresent(String.self, forKey: .country)
        }
    }

    /// Creates a user.
    ///
    /// - Parameters:
    ///   - objectType: The wire object type; defaults to `coaty.User`.
    ///   - objectID: The identity; defaults to a new random UUID.
    ///   - name: The user name (SCIM `userName`).
    ///   - names: The components of the real name.
    ///   - displayName: The name to display.
    ///   - nickName: A casual name.
    ///   - title: A title.
    ///   - userType: The relationship to the organisation.
    ///   - preferredLanguage: The preferred language.
    ///   - locale: The locale.
    ///   - timezone: The time zone.
    ///   - active: Whether the account is active.
    ///   - password: A password.
    ///   - emails: E-mail addresses.
    ///   - phoneNumbers: Phone numbers.
    ///   - ims: Instant-messaging addresses.
    ///   - photos: Photo URLs.
    ///   - addresses: Postal addresses.
    ///   - groups: Groups.
    ///   - entitlements: Entitlements.
    ///   - roles: Roles.
    ///   - x509Certificates: X.509 certificates.
    ///   - externalID: An identity in an external system.
    ///   - parentObjectID: The object this one belongs to.
    ///   - locationID: The location of this object.
    ///   - isDeactivated: Whether the object is deactivated.
    ///   - customProperties: Extra properties.
    public init(
        objectType: String? = nil,
        objectID: ObjectID = .random(),
        name: String,
        names: Names,
        displayName: String? = nil,
        nickName: String? = nil,
        title: String? = nil,
        userType: String? = nil,
        preferredLanguage: String? = nil,
        locale: String? = nil,
        timezone: String? = nil,
        active: Bool? = nil,
        password: String? = nil,
        emails: [Attribute]? = nil,
        phoneNumbers: [Attribute]? = nil,
        ims: [Attribute]? = nil,
        photos: [Attribute]? = nil,
        addresses: [Address]? = nil,
        groups: [Attribute]? = nil,
        entitlements: [AnyCodable]? = nil,
        roles: [String]? = nil,
        x509Certificates: [String]? = nil,
        externalID: String? = nil,
        parentObjectID: ObjectID? = nil,
        locationID: ObjectID? = nil,
        isDeactivated: Bool? = nil,
        customProperties: [String: AnyCodable] = [:]
    ) {
        self.names = names
        self.displayName = displayName
        self.nickName = nickName
        self.title = title
        self.userType = userType
        self.preferredLanguage = preferredLanguage
        self.locale = locale
        self.timezone = timezone
        self.active = active
        self.password = password
        self.emails = emails
        self.phoneNumbers = phoneNumbers
        self.ims = ims
        self.photos = photos
        self.addresses = addresses
        self.groups = groups
        self.entitlements = entitlements
        self.roles = roles
        self.x509Certificates = x509Certificates
        super.init(
            objectType: objectType,
            objectID: objectID,
            name: name,
            externalID: externalID,
            parentObjectID: parentObjectID,
            locationID: locationID,
            isDeactivated: isDeactivated,
            customProperties: customProperties
        )
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case names, displayName, nickName, title, userType, preferredLanguage, locale, timezone, active, password
        case emails, phoneNumbers, ims, photos, addresses, groups, entitlements, roles, x509Certificates
    }

    /// Decodes and validates a user as coaty-js does.
    ///
    /// - Throws: `DecodingError` naming the field: `names` missing or invalid (see ``Names``), a string or
    ///   boolean field of the wrong type, a malformed attribute or address, `entitlements` not an array, a
    ///   role or certificate empty, an optional field `null`, or any base-field error.
    public required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.names = try container.decode(Names.self, forKey: .names)
        self.displayName = try container.decodeStrictIfPresent(String.self, forKey: .displayName)
        self.nickName = try container.decodeStrictIfPresent(String.self, forKey: .nickName)
        self.title = try container.decodeStrictIfPresent(String.self, forKey: .title)
        self.userType = try container.decodeStrictIfPresent(String.self, forKey: .userType)
        self.preferredLanguage = try container.decodeStrictIfPresent(String.self, forKey: .preferredLanguage)
        self.locale = try container.decodeStrictIfPresent(String.self, forKey: .locale)
        self.timezone = try container.decodeStrictIfPresent(String.self, forKey: .timezone)
        self.active = try container.decodeStrictIfPresent(Bool.self, forKey: .active)
        self.password = try container.decodeStrictIfPresent(String.self, forKey: .password)
        self.emails = try container.decodeStrictIfPresent([Attribute].self, forKey: .emails)
        self.phoneNumbers = try container.decodeStrictIfPresent([Attribute].self, forKey: .phoneNumbers)
        self.ims = try container.decodeStrictIfPresent([Attribute].self, forKey: .ims)
        self.photos = try container.decodeStrictIfPresent([Attribute].self, forKey: .photos)
        self.addresses = try container.decodeStrictIfPresent([Address].self, forKey: .addresses)
        self.groups = try container.decodeStrictIfPresent([Attribute].self, forKey: .groups)
        self.entitlements = try container.decodeStrictIfPresent([AnyCodable].self, forKey: .entitlements)
        self.roles = try container.decodeStringArrayIfPresent(forKey: .roles)
        self.x509Certificates = try container.decodeStringArrayIfPresent(forKey: .x509Certificates)
        try super.init(from: decoder)
    }

    /// Encodes the user; absent optionals are omitted.
    override open func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.names, forKey: .names)
        try container.encodeIfPresent(self.displayName, forKey: .displayName)
        try container.encodeIfPresent(self.nickName, forKey: .nickName)
        try container.encodeIfPresent(self.title, forKey: .title)
        try container.encodeIfPresent(self.userType, forKey: .userType)
        try container.encodeIfPresent(self.preferredLanguage, forKey: .preferredLanguage)
        try container.encodeIfPresent(self.locale, forKey: .locale)
        try container.encodeIfPresent(self.timezone, forKey: .timezone)
        try container.encodeIfPresent(self.active, forKey: .active)
        try container.encodeIfPresent(self.password, forKey: .password)
        try container.encodeIfPresent(self.emails, forKey: .emails)
        try container.encodeIfPresent(self.phoneNumbers, forKey: .phoneNumbers)
        try container.encodeIfPresent(self.ims, forKey: .ims)
        try container.encodeIfPresent(self.photos, forKey: .photos)
        try container.encodeIfPresent(self.addresses, forKey: .addresses)
        try container.encodeIfPresent(self.groups, forKey: .groups)
        try container.encodeIfPresent(self.entitlements, forKey: .entitlements)
        try container.encodeIfPresent(self.roles, forKey: .roles)
        try container.encodeIfPresent(self.x509Certificates, forKey: .x509Certificates)
    }
}
